"""Hugging Face datasets: a labelled set exported for `datasets.load_dataset` (JSON Lines or Parquet) and
imported back, and a dataset written by the `datasets` library itself imported column by column."""

import json
import sys

import pytest

from annotation.models import Dataset, DatasetVersion, Example
from annotation.selectors.datasets import latest_version, version_records
from tests.conftest import run_cmd, write_jsonl

pytest.importorskip("pyarrow")
datasets = pytest.importorskip("datasets")

QUESTIONS: list[dict[str, object]] = [
    {"qid": "q1", "question": "How long is the trial?", "stratum": "policy", "expected": "30 days",
     "gold_doc_id": "doc:1", "gold_text": "Trials run 30 days.", "grading": "judge"},
    {"qid": "q2", "question": "Can I pause billing?", "stratum": "how_to", "expected": "no", "team": "billing"},
    {"qid": "q3", "question": "Is there a free plan?", "stratum": "no_answer", "gold_doc_id": None,
     "gold_chunk_id": None, "gold_text": None},
]  # fmt: skip


def records(name):
    version = latest_version(Dataset.objects.get(name=name))
    assert version is not None
    return [json.loads(text) for _qid, text in version_records(version)]


def dataset_hash(name):
    version = latest_version(Dataset.objects.get(name=name))
    assert version is not None
    return version.dataset_hash


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """datasets reads local files only and caches under the test's folder."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return str(tmp_path / "hf-cache")


def test_a_jsonl_export_is_read_by_datasets_and_imports_back_to_the_same_hash(db, tmp_path, offline):
    assert run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", QUESTIONS)), "--dataset", "src")[0] == 0
    out_file = tmp_path / "set.jsonl"
    code, _out, err = run_cmd("export_questions", "--dataset", "src", "--format", "hf", "-o", str(out_file))
    assert code == 0, err
    loaded = datasets.load_dataset("json", data_files=str(out_file), split="train", cache_dir=offline)
    assert loaded.num_rows == 3
    assert loaded["qid"] == ["q1", "q2", "q3"]
    assert loaded["expected"] == ["30 days", "no", None]
    code, out, err = run_cmd(
        "import_questions", str(out_file), "--format", "hf", "--dataset", "back", "--keep-unmapped", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == []
    assert dataset_hash("back") == dataset_hash("src")
    assert records("back") == records("src")


def test_a_parquet_export_is_read_by_datasets_and_imports_back(db, tmp_path, offline):
    rows = [{k: v for k, v in q.items() if v is not None} for q in QUESTIONS]  # Parquet has no explicit null
    assert run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", rows)), "--dataset", "src")[0] == 0
    out_file = tmp_path / "set.parquet"
    code, _out, err = run_cmd(
        "export_questions", "--dataset", "src", "--format", "hf", "--parquet", "-o", str(out_file)
    )
    assert code == 0, err
    loaded = datasets.load_dataset("parquet", data_files=str(out_file), split="train", cache_dir=offline)
    assert loaded.column_names == [
        "qid", "question", "expected", "stratum", "gold_doc_id", "gold_text", "grading", "team",
    ]  # fmt: skip
    assert loaded[1] == {
        "qid": "q2", "question": "Can I pause billing?", "expected": "no", "stratum": "how_to", "gold_doc_id": None,
        "gold_text": None, "grading": None, "team": "billing",
    }  # fmt: skip
    # Without --keep-unmapped the column no record field maps is reported and left out.
    code, out, err = run_cmd("import_questions", str(out_file), "--format", "hf", "--dataset", "lean", "--json")
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == ["team"]
    assert records("lean")[1] == {
        "qid": "q2",
        "question": "Can I pause billing?",
        "expected": "no",
        "stratum": "how_to",
    }
    code, _out, err = run_cmd(
        "import_questions", str(out_file), "--format", "hf", "--dataset", "back", "--keep-unmapped"
    )
    assert code == 0, err
    assert dataset_hash("back") == dataset_hash("src")


SQUAD_LIKE = [
    {"id": "5733be", "title": "Pricing", "context": "Trials run 30 days.", "question": "How long is the trial?",
     "answer": "30 days"},
    {"id": "5733bf", "title": "Billing", "context": "Billing cannot be paused.", "question": "Can I pause billing?",
     "answer": "no"},
]  # fmt: skip


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_a_file_written_by_datasets_maps_its_columns(db, tmp_path, suffix):
    path = tmp_path / f"squad.{suffix}"
    table = datasets.Dataset.from_list(SQUAD_LIKE)
    table.to_json(str(path)) if suffix == "jsonl" else table.to_parquet(str(path))
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "hf", "--dataset", "squad", "--stratum-default", "factoid", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == ["title"]
    assert records("squad") == [
        {"qid": "5733be", "question": "How long is the trial?", "expected": "30 days", "gold_text": "Trials run 30 days.",
         "stratum": "factoid"},
        {"qid": "5733bf", "question": "Can I pause billing?", "expected": "no",
         "gold_text": "Billing cannot be paused.", "stratum": "factoid"},
    ]  # fmt: skip


def test_the_key_options_name_other_columns(db, tmp_path):
    rows = [{"uid": 17, "prompt": "Is SSO included?", "target": "yes", "passage": "SSO is on every plan.", "kind": "x"}]
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(path))
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "hf", "--dataset", "keys", "--qid-key", "uid", "--question-key",
        "prompt", "--expected-key", "target", "--context-key", "passage", "--stratum-key", "kind", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["not_mapped"] == []
    assert records("keys") == [
        {"qid": "17", "question": "Is SSO included?", "expected": "yes", "gold_text": "SSO is on every plan.",
         "stratum": "x"},
    ]  # fmt: skip


def test_a_row_without_a_stratum_or_a_repeated_id_is_refused_by_row_and_column(db, tmp_path):
    counts = (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count())
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list([*SQUAD_LIKE, {**SQUAD_LIKE[0], "question": "Again?"}]).to_parquet(str(path))
    code, out, _err = run_cmd("import_questions", str(path), "--format", "hf", "--dataset", "bad", "--json")
    assert code == 2
    problems = json.loads(out)["problems"]
    assert [(p["item"], p["field"]) for p in problems] == [(0, "stratum"), (1, "stratum"), (2, "stratum")]
    assert problems[0]["message"] == "missing: the row has no stratum; give --stratum-default"
    code, out, _err = run_cmd(
        "import_questions", str(path), "--format", "hf", "--dataset", "bad", "--stratum-default", "s", "--json"
    )
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 2, "line": None, "field": "id", "message": "duplicate qid '5733be' (first on item 0)"},
    ]
    path = write_jsonl(tmp_path / "rows.jsonl", [{"id": "a", "prompt": "?"}])
    code, out, _err = run_cmd("import_questions", str(path), "--format", "hf", "--dataset", "bad", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": None, "field": "question", "message": "missing: the file has no 'question' column"},
        {"line": 1, "field": "stratum", "message": "missing: the row has no stratum; give --stratum-default"},
    ]
    assert (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count()) == counts


def test_parquet_without_pyarrow_is_a_clear_bad_input_error(db, tmp_path, monkeypatch):
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list(SQUAD_LIKE).to_parquet(str(path))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    code, _out, err = run_cmd(
        "import_questions", str(path), "--format", "hf", "--dataset", "x", "--stratum-default", "s"
    )
    assert code == 2
    assert "reading or writing Parquet needs pyarrow, which is not installed: pip install 'evalapp[hf]'" in err
    assert not Dataset.objects.filter(name="x").exists()


def test_parquet_export_needs_an_output_file(db, tmp_path):
    assert (
        run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", QUESTIONS[:1])), "--dataset", "src")[0] == 0
    )
    code, out, err = run_cmd("export_questions", "--dataset", "src", "--format", "hf", "--parquet")
    assert (code, out) == (2, "")
    assert "--parquet goes with --format hf and --output FILE" in err


def test_an_unknown_export_format_is_refused(db, tmp_path):
    assert (
        run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", QUESTIONS[:1])), "--dataset", "src")[0] == 0
    )
    code, out, err = run_cmd("export_questions", "--dataset", "src", "--format", "csv", "-o", str(tmp_path / "x"))
    assert (code, out) == (2, "")
    assert "unknown questions export format 'csv'; one of jsonl, hf" in err
    assert not (tmp_path / "x").exists()
