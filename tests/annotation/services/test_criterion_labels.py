"""Labels on a dataset's criteria (`{"criterion", "value"}` lines): checked against the definition by line,
never silently replaced, kept with their history; the binary verdicts beside them are untouched."""

import json

import pytest

from annotation.models import CriterionLabel, CriterionLabelEvent, HumanLabel, LabelEvent
from annotation.services.criteria import criterion_set
from tests.conftest import run_cmd, write_jsonl


@pytest.fixture
def rubric(run_file):
    run_cmd("import_run", str(run_file))
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"), pass_rule=">=4")
    criterion_set(dataset_name="support", name="tone", kind="categorical", values=["rude", "neutral", "kind"])


def line(qid, annotator, **fields):
    return {"run_id": "r1", "qid": qid, "annotator": annotator, "labelled_at": "2026-05-20T10:00:00Z", **fields}


def rows():
    return sorted(
        CriterionLabel.objects.values_list("answer__qid", "annotator__username", "name", "criterion__number", "value")
    )


@pytest.mark.django_db
def test_criterion_lines_import_beside_verdicts_with_their_history(tmp_path, rubric):
    labels = [
        line("q-0001", "ann1", criterion="faithfulness", value=4),
        line("q-0001", "ann1", criterion="tone", value="kind"),
        line("q-0001", "ann1", verdict="correct"),
        line("q-0001", "ann2", criterion="faithfulness", value="2"),
    ]
    code, out, err = run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", labels)), "--json")
    assert code == 0, err
    assert json.loads(out)["created"] == 4
    assert rows() == [
        ("q-0001", "ann1", "faithfulness", 1, "4"),
        ("q-0001", "ann1", "tone", 1, "kind"),
        ("q-0001", "ann2", "faithfulness", 1, "2"),
    ]
    assert list(HumanLabel.objects.values_list("annotator__username", "verdict")) == [("ann1", "correct")]
    assert LabelEvent.objects.count() == 1 and CriterionLabelEvent.objects.count() == 3
    # The same file again changes nothing; a different value without --replace is refused, with it kept in history.
    code, out, _ = run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", labels)), "--json")
    assert (code, json.loads(out)["unchanged"], json.loads(out)["created"]) == (0, 4, 0)
    relabel = [line("q-0001", "ann2", criterion="faithfulness", value=5)]
    code, _, err = run_cmd("import_labels", str(write_jsonl(tmp_path / "r.jsonl", relabel)))
    assert code == 2 and "line 1" in err and "'2'" in err and "'5'" in err and "--replace" in err
    assert rows()[2][-1] == "2" and CriterionLabelEvent.objects.count() == 3
    code, out, _ = run_cmd(
        "import_labels", str(write_jsonl(tmp_path / "r.jsonl", relabel)), "--replace", "--reason", "rescored", "--json"
    )
    assert (code, json.loads(out)["replaced"]) == (0, 1)
    assert rows()[2][-1] == "5"
    assert list(
        CriterionLabelEvent.objects.filter(annotator__username="ann2").values_list("old_value", "new_value", "reason")
    ) == [("", "2", ""), ("2", "5", "rescored")]


@pytest.mark.django_db
def test_bad_criterion_lines_are_refused_by_line_and_nothing_is_written(tmp_path, rubric):
    labels = [
        line("q-0001", "ann1", criterion="faithfulness", value=4),  # good, but the file is refused whole
        line("q-0001", "ann2", criterion="faithfulness", value=6),
        line("q-0002", "ann1", criterion="relevance", value="3"),
        line("q-0002", "ann2", criterion="tone", value=True),
        line("q-0003", "ann1", criterion="tone", value="kind", verdict="correct"),
        line("q-0001", "ann1", criterion="faithfulness", value=3),
        line("q-0003", "ann2", verdict="correct"),  # good
        line("q-0003", "ann2", criterion="tone", value=True),  # a bad value only, not a second verdict too
    ]
    code, out, _ = run_cmd("import_labels", str(write_jsonl(tmp_path / "bad.jsonl", labels)), "--json")
    assert code == 2
    found = [(p["line"], p["field"]) for p in json.loads(out)["problems"]]
    assert found == [(2, "value"), (3, "criterion"), (4, "value"), (5, "verdict"), (6, "annotator"), (8, "value")]
    messages = {p["line"]: p["message"] for p in json.loads(out)["problems"]}
    assert messages[2] == "'6' is not a value of 'faithfulness' v1: one of 1, 2, 3, 4, 5"
    assert "no criterion 'relevance'" in messages[3]
    assert "first on line 1" in messages[6]
    assert CriterionLabel.objects.count() == 0 and HumanLabel.objects.count() == 0
    assert CriterionLabelEvent.objects.count() == 0 and LabelEvent.objects.count() == 0


@pytest.mark.django_db
def test_a_criterion_value_is_kept_under_the_version_it_was_given_on(tmp_path, rubric):
    run_cmd(
        "import_labels",
        str(write_jsonl(tmp_path / "a.jsonl", [line("q-0001", "ann1", criterion="tone", value="rude")])),
    )
    criterion_set(dataset_name="support", name="tone", kind="categorical", values=["rude", "neutral", "kind", "warm"])
    run_cmd(
        "import_labels",
        str(write_jsonl(tmp_path / "b.jsonl", [line("q-0002", "ann1", criterion="tone", value="warm")])),
    )
    assert rows() == [("q-0001", "ann1", "tone", 1, "rude"), ("q-0002", "ann1", "tone", 2, "warm")]


@pytest.mark.django_db
def test_the_export_carries_criterion_values_and_imports_back_unchanged(tmp_path, rubric):
    labels = [
        line("q-0002", "ann1", criterion="faithfulness", value=3),
        line("q-0001", "ann1", verdict="correct"),
        {**line("q-0001", "ann2", criterion="tone", value="neutral"), "labelled_at": "2026-05-20T09:00:00Z"},
    ]
    assert run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", labels)))[0] == 0
    out = tmp_path / "export.jsonl"
    code, _, _ = run_cmd("export_labels", "--run", "r1", "--output", str(out))
    exported = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0
    assert [(e["qid"], e["annotator"], e.get("criterion"), e.get("value"), e.get("verdict")) for e in exported] == [
        ("q-0001", "ann2", "tone", "neutral", None),  # 09:00, before the verdict's 10:00
        ("q-0001", "ann1", None, None, "correct"),
        ("q-0002", "ann1", "faithfulness", "3", None),
    ]
    code, printed, _ = run_cmd("import_labels", str(out), "--json")
    assert (code, json.loads(printed)["unchanged"], json.loads(printed)["created"]) == (0, 3, 0)
