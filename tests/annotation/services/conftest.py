"""Helpers and fixtures shared by the service tests of the annotation app."""

import pytest

from annotation.models import Queue, QueueItem, QueueMember
from tests.conftest import write_jsonl


def _counts():
    return Queue.objects.count(), QueueItem.objects.count(), QueueMember.objects.count()


def run_record(run_id="r1", **extra):
    record = {
        "run_id": run_id,
        "system": "rag-v2",
        "dataset": "support",
        "model_snapshot": "m-2026-05",
        "prompt_hash": "p1",
        "evaluator_version": "e1",
        "evaluator_config_hash": "c1",
        "harness_commit": "abc",
        "index_id": "prod-index@2026-06-02",
        "started_at": "2026-06-07T02:00:00Z",
        "owner": "ops",
    }
    record.update(extra)
    return record


ANSWERS = [
    {
        "qid": "q-0001",
        "answer": "A month; it will not roll over.",
        "correct": True,
        "retrieved": [{"chunk_id": "confluence:PRICE/8821#0001", "rank": 1}],
        "prompt_chunks": ["confluence:PRICE/8821#0001"],
    },
    {"qid": "q-0002", "answer": "Every 30 days.", "correct": False, "retrieved": [], "prompt_chunks": []},
    {"qid": "q-0003", "answer": "I don't know."},
]


@pytest.fixture
def run_file(tmp_path, loaded):
    return write_jsonl(tmp_path / "run.jsonl", [run_record(), *ANSWERS])
