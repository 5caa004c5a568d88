"""A small world for the bridges: a dataset of three questions with two criteria (a 1-5 scale and a
categorical tone), a system run answering all three, and two annotators."""

import json

import pytest

from annotation.models import CriterionLabel, CriterionLabelEvent, HumanLabel, LabelEvent
from annotation.services.criteria import criterion_set
from annotation.services.datasets import questions_import
from annotation.services.runs import run_import
from tests.conftest import write_jsonl

QUESTIONS = [
    {"qid": "q1", "question": "How long is the trial?", "stratum": "policy", "expected": "30 days"},
    {"qid": "q2", "question": "Can I pause billing?", "stratum": "policy", "expected": "no"},
    {"qid": "q3", "question": "Who signs the DPA?", "stratum": "how_to", "expected": "legal"},
]


@pytest.fixture
def world(db, tmp_path, make_user):
    questions_import(path=write_jsonl(tmp_path / "q.jsonl", QUESTIONS), dataset_name="bridge-set")
    criterion_set(dataset_name="bridge-set", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    criterion_set(dataset_name="bridge-set", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    rows = [{"run_id": "r-bridge", "system": "rag-v2", "dataset": "bridge-set"}]
    rows += [{"qid": q["qid"], "answer": f"answer to {q['qid']}"} for q in QUESTIONS]
    run_import(path=write_jsonl(tmp_path / "run.jsonl", rows))
    make_user("ann1", "annotator")
    make_user("ann2", "annotator")
    return "r-bridge"


def label_counts() -> tuple[int, int, int, int]:
    return (
        HumanLabel.objects.count(),
        LabelEvent.objects.count(),
        CriterionLabel.objects.count(),
        CriterionLabelEvent.objects.count(),
    )


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path
