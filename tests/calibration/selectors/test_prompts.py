"""The prompt preview's item: one real answer of the chosen dataset (the judge's sample first), never one
of a run the viewer is labelling blind."""

import pytest

from annotation.selectors.blind import OPERATOR, blind_scope
from annotation.services.queues import queue_create
from annotation.services.runs import run_import
from calibration.backends import JudgeItem
from calibration.models import SampleItem
from calibration.selectors.prompts import preview_item
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_for
from evalapp.errors import NotFound
from tests.calibration.world import write_world

Q0 = JudgeItem(
    run_id="run-a",
    qid="q-0000",
    question="what is the code of item 0?",
    answer="I am not sure which code applies.",
    expected="code 0000",
    gold_text="The code of item 0 is code 0000.",
    stratum="policy_lookup",
)


@pytest.mark.django_db
def test_without_a_sample_the_first_answer_by_qid(world):
    found = preview_item(dataset_name="support", scope=OPERATOR)

    assert found is not None
    assert (found.item, found.source) == (Q0, "answer of run run-a to q-0000, the first question of support")


@pytest.mark.django_db
def test_a_named_question_and_the_judges_sample(world):
    named = preview_item(dataset_name="support", qid="q-0007", scope=OPERATOR)
    assert named is not None
    assert (named.item.qid, named.item.answer, named.item.stratum, named.source) == (
        "q-0007",
        "The code is code 0007.",
        "numeric",
        "answer of run run-a to q-0007",
    )
    assert preview_item(dataset_name="support", qid="q-9999", scope=OPERATOR) is None

    version, _ = judge_version_create(judge_name="span-judge", backend="span")
    from annotation.models import Dataset

    sample = sample_for(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=10, seed=4)
    first = SampleItem.objects.filter(sample=sample).order_by("position").first()
    assert first is not None
    found = preview_item(dataset_name="support", judge_name="span-judge", scope=OPERATOR)
    assert found is not None
    assert (found.item.qid, found.source) == (
        first.answer.qid,
        f"answer of run run-a to {first.answer.qid}, item 1 of span-judge's calibration sample",
    )
    # Another judge has no sample: the first answer.
    other = preview_item(dataset_name="support", judge_name="other", scope=OPERATOR)
    assert other is not None and other.item == Q0


@pytest.mark.django_db
def test_a_run_the_viewer_labels_blind_is_never_previewed(world, tmp_path, make_user):
    files = write_world(tmp_path / "b", run_id="run-b")
    run_import(path=files["run"])
    both = make_user("eng_ann", "engineer", "annotator")
    make_user("ann_o", "annotator")
    queue_create(name="blind", run_id="run-b", annotators=["eng_ann", "ann_o"], overlap=2)

    seen = preview_item(dataset_name="support", qid="q-0001", scope=blind_scope(both))
    assert seen is not None and seen.item.run_id == "run-a"
    queue_create(name="blind a", items=[{"run_id": "run-a", "qid": "q-0003"}], annotators=["eng_ann", "ann_o"])
    assert preview_item(dataset_name="support", qid="q-0001", scope=blind_scope(both)) is None
    assert preview_item(dataset_name="support", scope=blind_scope(both)) is None
    # The operator (and an engineer in no pool) still sees run-b's answer.
    operator = preview_item(dataset_name="support", qid="q-0001", scope=OPERATOR)
    assert operator is not None and operator.item.run_id == "run-b"


@pytest.mark.django_db
def test_an_unknown_dataset_is_named():
    with pytest.raises(NotFound, match="unknown dataset 'nope'"):
        preview_item(dataset_name="nope", scope=OPERATOR)
