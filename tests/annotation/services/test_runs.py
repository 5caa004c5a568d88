"""System runs: an import pins its inputs to a dataset version and names every bad line."""

import json

import pytest

from annotation.models import Answer, Run
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import run_cmd, write_jsonl


@pytest.mark.django_db
def test_import_run_pins_inputs_to_the_latest_version(run_file, loaded):
    code, out, _ = run_cmd("import_run", str(run_file), "--json")
    assert code == 0
    assert json.loads(out) == {
        "run_id": "r1",
        "answers": 3,
        "dataset": "support",
        "dataset_hash": loaded.dataset_hash,
        "missing_pins": ["dataset_hash"],
        "warnings": [
            "the run record has no 'dataset_hash': it was pinned to the dataset's latest version at import, "
            "and it never counts as a repeat of another run in the run-to-run band"
        ],
        "format": "jsonl",
        "not_mapped": [],
    }
    run = Run.objects.get()
    assert (run.index_id, run.record["owner"], run.dataset_version.number) == ("prod-index@2026-06-02", "ops", 1)
    assert list(Answer.objects.order_by("qid").values_list("qid", "correct")) == [
        ("q-0001", True),
        ("q-0002", False),
        ("q-0003", None),
    ]
    # A run is never overwritten.
    code, _, err = run_cmd("import_run", str(run_file))
    assert code == 2 and "already imported" in err and Answer.objects.count() == 3


@pytest.mark.django_db
def test_bad_run_lines_are_named_and_nothing_written(tmp_path, loaded):
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            run_record(dataset_hash="sha256:nope"),
            {"qid": "q-0001", "answer": 3},
            {"qid": "q-9999", "answer": "x", "correct": "yes"},
        ],
    )
    code, _, err = run_cmd("import_run", str(path))
    assert code == 2
    assert "line 1, field 'dataset_hash': dataset 'support' has no version 'sha256:nope'" in err
    assert "line 2, field 'answer': must be a string" in err
    assert "line 3, field 'correct': must be true, false or absent" in err
    assert Run.objects.count() == 0
    path = write_jsonl(tmp_path / "bad2.jsonl", [run_record(), {"qid": "q-9999", "answer": "x"}])
    code, _, err = run_cmd("import_run", str(path))
    assert code == 2 and "line 2, field 'qid': qid 'q-9999' is not in dataset version" in err


@pytest.mark.django_db
def test_a_dataset_hash_alone_pins_the_run(tmp_path, loaded):
    record = run_record(dataset=None, dataset_hash=loaded.dataset_hash)
    del record["dataset"]
    code, out, _ = run_cmd("import_run", str(write_jsonl(tmp_path / "r.jsonl", [record, ANSWERS[0]])), "--json")
    assert code == 0 and json.loads(out)["dataset"] == "support"
    record["run_id"], record["dataset_hash"] = "r2", "sha256:0000"
    code, _, err = run_cmd("import_run", str(write_jsonl(tmp_path / "r2.jsonl", [record, ANSWERS[0]])))
    assert code == 2 and "line 1, field 'dataset_hash': no dataset version has the hash 'sha256:0000'" in err


@pytest.mark.django_db
def test_a_run_missing_pins_is_imported_with_a_warning_naming_them(tmp_path, loaded):
    record = run_record(prompt_hash="", index_id=None)
    del record["harness_commit"]
    code, out, err = run_cmd("import_run", str(write_jsonl(tmp_path / "r.jsonl", [record, ANSWERS[0]])), "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["missing_pins"] == ["prompt_hash", "harness_commit", "index_id", "dataset_hash"]
    assert payload["warnings"] == [
        "the run record has no 'prompt_hash': the run cannot be reproduced from its record, and it never counts "
        "as a repeat of another run in the run-to-run band",
        "the run record has no 'harness_commit': the run cannot be reproduced from its record, and it never counts "
        "as a repeat of another run in the run-to-run band",
        "the run record has no 'index_id': the run cannot be reproduced from its record, and it never counts "
        "as a repeat of another run in the run-to-run band",
        "the run record has no 'dataset_hash': it was pinned to the dataset's latest version at import, "
        "and it never counts as a repeat of another run in the run-to-run band",
    ]
    assert err.count("warning: the run record has no ") == 4
    assert Run.objects.get().dataset_hash == loaded.dataset_hash


@pytest.mark.django_db
def test_a_fully_pinned_run_has_no_warnings(tmp_path, loaded):
    record = run_record(dataset_hash=loaded.dataset_hash)
    code, out, err = run_cmd("import_run", str(write_jsonl(tmp_path / "r.jsonl", [record, ANSWERS[0]])), "--json")
    assert (code, json.loads(out)["missing_pins"], json.loads(out)["warnings"], err) == (0, [], [], "")


@pytest.mark.django_db
def test_strict_refuses_a_run_missing_pins_and_writes_nothing(tmp_path, loaded):
    record = run_record(model_snapshot="")
    path = write_jsonl(tmp_path / "r.jsonl", [record, ANSWERS[0]])
    code, out, _ = run_cmd("import_run", str(path), "--strict", "--json")
    assert code == 2
    assert [(p["line"], p["field"], p["message"]) for p in json.loads(out)["problems"]] == [
        (1, "model_snapshot", "missing pinned field; --strict refuses a run record without it"),
        (1, "dataset_hash", "missing pinned field; --strict refuses a run record without it"),
    ]
    assert (Run.objects.count(), Answer.objects.count()) == (0, 0)
    record.update(model_snapshot="m-2026-05", dataset_hash=loaded.dataset_hash)
    code, out, _ = run_cmd("import_run", str(write_jsonl(tmp_path / "ok.jsonl", [record, ANSWERS[0]])), "--strict")
    assert code == 0 and Run.objects.count() == 1
