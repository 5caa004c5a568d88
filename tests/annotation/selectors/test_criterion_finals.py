"""The final value on a criterion: the value every annotator gave; disputed and unlabelled answers absent."""

import pytest

from annotation.models import Answer
from annotation.selectors.criterion_finals import criterion_finals
from annotation.services.criteria import criterion_set
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import run_cmd, write_jsonl


@pytest.mark.django_db
def test_agreed_and_single_values_are_final_and_disputed_ones_are_absent(tmp_path, loaded):
    run_cmd("import_run", str(write_jsonl(tmp_path / "run.jsonl", [run_record(), *ANSWERS])))
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    given = {"q-0001": ("4", "4"), "q-0002": ("3", "5"), "q-0003": ("2", None)}
    lines = [
        {"run_id": "r1", "qid": qid, "annotator": who, "criterion": "faithfulness", "value": value}
        for qid, values in given.items()
        for who, value in zip(("ann1", "ann2"), values, strict=True)
        if value is not None
    ]
    assert run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", lines)))[0] == 0
    ids = dict(Answer.objects.filter(run__run_id="r1").values_list("qid", "id"))
    run_pk = Answer.objects.get(id=ids["q-0001"]).run_id

    assert criterion_finals(name="faithfulness", run_pk=run_pk) == {ids["q-0001"]: "4", ids["q-0003"]: "2"}
    assert criterion_finals(name="faithfulness", answer_ids=[ids["q-0003"], ids["q-0002"]]) == {ids["q-0003"]: "2"}
    assert criterion_finals(name="relevance", run_pk=run_pk) == {}
