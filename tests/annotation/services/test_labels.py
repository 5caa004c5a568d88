"""Labels written in the app: one label is final outside queues, an adjudication settles a disagreement."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Answer
from annotation.services.labels import adjudication_record, label_write
from tests.conftest import run_cmd


@pytest.mark.django_db
def test_adjudication_overrides_a_disagreement(run_file, make_user):
    run_cmd("import_run", str(run_file))
    answer = Answer.objects.get(qid="q-0002")
    label_write(answer=answer, annotator=make_user("a1", "annotator"), verdict="correct")
    label_write(answer=answer, annotator=make_user("a2", "annotator"), verdict="incorrect")
    answer.refresh_from_db()
    assert answer.final_verdict == ""
    adjudication_record(
        answer=answer, adjudicator=make_user("adj", "adjudicator"), verdict="incorrect", reason="30 != 90"
    )
    answer.refresh_from_db()
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")


@pytest.mark.django_db
def test_one_label_is_final_outside_queues_and_work_in_progress_inside_a_double_annotation_queue(tmp_path):
    """A team that grades each answer once can calibrate on its imported labels; in a blind queue with
    overlap 2 one label is not final, and a second label that disagrees withdraws the final label."""
    from annotation.models import Answer
    from annotation.services.labels import final_label_refresh, label_write
    from annotation.services.queues import queue_create
    from tests.comparisons.support import (
        import_questions,
        import_run,
        q,
        run_command,
        write_jsonl,
    )

    v = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001"), q("q-0002")], "v1")
    import_run(
        tmp_path,
        run_id="A",
        system="s",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct={"q-0000": None, "q-0001": None, "q-0002": None},
    )
    run_command(
        "import_labels",
        str(
            write_jsonl(
                tmp_path / "labels.jsonl",
                [
                    {
                        "run_id": "A",
                        "qid": qid,
                        "annotator": "ann1",
                        "verdict": "correct",
                        "labelled_at": "2026-06-01T10:00:00Z",
                    }
                    for qid in ("q-0000", "q-0001")
                ],
            )
        ),
    )

    def final(qid):
        return tuple(Answer.objects.filter(run__run_id="A", qid=qid).values_list("final_verdict", "final_source").get())

    assert final("q-0000") == ("correct", "single") and final("q-0001") == ("correct", "single")
    assert final("q-0002") == ("", "")

    from django.contrib.auth.models import Group

    annotators = Group.objects.get_or_create(name="annotator")[0]
    ann2 = get_user_model().objects.create_user("ann2")
    ann2.groups.add(annotators)
    get_user_model().objects.create_user("ann3").groups.add(annotators)
    queue_create(
        name="June sample",
        annotators=["ann2", "ann3"],
        overlap=2,
        items=[{"run_id": "A", "qid": "q-0001"}, {"run_id": "A", "qid": "q-0002"}],
    )
    assert final("q-0000") == ("correct", "single")  # not in the queue
    assert final("q-0001") == ("", "")  # one of the two labels the queue needs
    answer = Answer.objects.get(run__run_id="A", qid="q-0001")
    label_write(answer=answer, annotator=ann2, verdict="correct")
    assert final("q-0001") == ("correct", "agreement")

    # Outside a queue, a second label that disagrees withdraws the single label's final verdict.
    label_write(answer=Answer.objects.get(run__run_id="A", qid="q-0000"), annotator=ann2, verdict="incorrect")
    assert final("q-0000") == ("", "")
    assert final_label_refresh(answer_ids=[answer.pk]) == 0
