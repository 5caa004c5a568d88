"""System run reads, from rows made by factories: lookup under the viewer's blind scope, final labels and
the scores a run's answers carry."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import Run
from annotation.selectors.blind import blind_scope
from annotation.selectors.runs import final_labels, pins_complete, repeats_of, run_get, run_scores
from evalapp.errors import NotFound
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import run_cmd, write_jsonl
from tests.factories import AnswerFactory, QueueItemFactory, QueueMemberFactory, RunFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def nightly():
    """run nightly: q-1 the harness scored right, q-2 wrong (a human said correct: the harness wins),
    q-3 unscored by the harness and labelled incorrect, q-4 neither scored nor labelled."""
    run = RunFactory(run_id="nightly")
    AnswerFactory(run=run, qid="q-1", correct=True)
    AnswerFactory(run=run, qid="q-2", correct=False, final_verdict="correct")
    AnswerFactory(run=run, qid="q-3", correct=None, final_verdict="incorrect")
    AnswerFactory(run=run, qid="q-4", correct=None)
    AnswerFactory(qid="q-1", correct=False, final_verdict="incorrect")  # another run's answer
    return run


def test_scores_are_the_harness_score_else_the_final_label(nightly):
    assert run_scores(nightly) == {"q-1": 1.0, "q-2": 0.0, "q-3": 0.0}
    assert final_labels(nightly) == {"q-2": "correct", "q-3": "incorrect"}


def test_a_run_without_answers_has_no_scores_and_no_labels():
    empty = RunFactory(run_id="empty")
    assert (run_scores(empty), final_labels(empty)) == ({}, {})


def test_run_get_names_an_unknown_run_and_refuses_a_blind_one(nightly):
    assert run_get("nightly") == nightly
    with pytest.raises(NotFound) as unknown:
        run_get("nightly-2")
    assert (unknown.value.message, unknown.value.status) == ("unknown run 'nightly-2'", 404)

    eng = UserFactory(username="eng", roles=("engineer", "annotator"))
    assert run_get("nightly", scope=blind_scope(eng)) == nightly
    item = QueueItemFactory(answer=nightly.answers.get(qid="q-4"))
    QueueMemberFactory(queue=item.queue, user=eng)
    with pytest.raises(PermissionDenied):
        run_get("nightly", scope=blind_scope(eng))
    assert run_get("nightly") == nightly  # commands run as the operator


def _import(tmp_path, record):
    path = write_jsonl(tmp_path / f"{record['run_id']}.jsonl", [record, ANSWERS[0]])
    assert run_cmd("import_run", str(path))[0] == 0
    return Run.objects.get(run_id=record["run_id"])


def test_runs_with_empty_pins_never_count_as_repeats_of_one_another(tmp_path, loaded):
    h = loaded.dataset_hash
    full = [_import(tmp_path, run_record(f"full-{i}", dataset_hash=h)) for i in range(2)]
    empty = [_import(tmp_path, run_record(f"empty-{i}", dataset_hash=h, index_id="")) for i in range(2)]
    # No dataset hash in the record: the import fills in the latest version's, which matches the full runs'.
    unhashed = _import(tmp_path, run_record("unhashed"))
    assert unhashed.dataset_hash == h
    assert [pins_complete(r) for r in (*full, *empty, unhashed)] == [True, True, False, False, False]
    assert [r.run_id for r in repeats_of(full[0])] == ["full-0", "full-1"]
    assert [r.run_id for r in repeats_of(empty[0])] == ["empty-0"]
    assert [r.run_id for r in repeats_of(unhashed)] == ["unhashed"]
    assert [r.run_id for r in repeats_of(full[1], exclude_pks=[full[0].pk])] == ["full-1"]


def test_the_run_to_run_band_never_takes_runs_with_empty_pins_as_repeats(tmp_path, loaded):
    """comparisons' repeat_runs (the band's runs) follows repeats_of: two runs that both left index_id empty
    may differ in it, so neither is the other's repeat; fully pinned runs still are."""
    from comparisons.selectors.runs import repeat_runs

    h = loaded.dataset_hash
    full = [_import(tmp_path, run_record(f"full-{i}", dataset_hash=h)) for i in range(2)]
    empty = [_import(tmp_path, run_record(f"empty-{i}", dataset_hash=h, index_id="")) for i in range(2)]
    assert [r.run_id for r in repeat_runs(full[1])] == ["full-0", "full-1"]
    assert [r.run_id for r in repeat_runs(empty[1])] == ["empty-1"]
