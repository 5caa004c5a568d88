"""A small labelled world for calibration tests, written as the JSONL files users import.

n questions over three strata; the answer to question i contains the expected answer unless
i % 3 == 0; two annotators agree on every answer, and their verdict follows the expected answer except
where i % 10 == 1 (humans call a containing answer incorrect), so a span judge disagrees there.
"""

import json
from pathlib import Path

STRATA = ("policy_lookup", "numeric", "howto")


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def expected_for(i: int) -> str:
    return f"code {i:04d}"


def human_verdict(i: int) -> str:
    contains = i % 3 != 0
    if i % 10 == 1:
        return "incorrect"
    return "correct" if contains else "incorrect"


def judge_truth(i: int) -> str:
    """What a span judge (and the test server) says about answer i."""
    return "correct" if i % 3 != 0 else "incorrect"


def write_world(
    directory: Path, *, n: int = 60, run_id: str = "run-a", dataset: str = "support", markers: dict | None = None
) -> dict:
    """Write questions.jsonl, run.jsonl and labels.jsonl; `markers` maps i -> text appended to the answer."""
    directory.mkdir(parents=True, exist_ok=True)
    markers = markers or {}
    questions = [
        {
            "qid": f"q-{i:04d}",
            "question": f"what is the code of item {i}?",
            "stratum": STRATA[i % 3],
            "gold_doc_id": "doc:codes",
            "gold_chunk_id": f"doc:codes#{i:04d}",
            "gold_text": f"The code of item {i} is {expected_for(i)}.",
            "expected": expected_for(i),
            "grading": "judge",
        }
        for i in range(n)
    ]
    answers = [{"run_id": run_id, "system": "rag-v2", "dataset": dataset, "started_at": "2026-06-07T02:00:00Z"}]
    for i in range(n):
        text = f"The code is {expected_for(i)}." if i % 3 != 0 else "I am not sure which code applies."
        if i in markers:
            text += " " + markers[i]
        answers.append({"qid": f"q-{i:04d}", "answer": text})
    labels = [
        {
            "run_id": run_id,
            "qid": f"q-{i:04d}",
            "annotator": who,
            "verdict": human_verdict(i),
            "labelled_at": "2026-06-08T10:00:00Z",
        }
        for i in range(n)
        for who in ("ann-a", "ann-b")
    ]
    return {
        "questions": _write(directory / "questions.jsonl", questions),
        "run": _write(directory / "run.jsonl", answers),
        "labels": _write(directory / "labels.jsonl", labels),
        "n": n,
        "run_id": run_id,
        "dataset": dataset,
    }


def load_world(directory: Path, **kwargs) -> dict:
    """write_world, then import the files through the annotation services."""
    from annotation.services.datasets import questions_import
    from annotation.services.label_import import labels_import
    from annotation.services.runs import run_import

    files = write_world(directory, **kwargs)
    questions_import(path=files["questions"], dataset_name=files["dataset"])
    run_import(path=files["run"])
    labels_import(path=files["labels"], create_users=True)
    return files
