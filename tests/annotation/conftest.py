"""Fixtures for the annotation tests: a labelled set with strata and a run over it, built through the
services (questions_import, run_import, user_upsert), and annotation queues over that run."""
import itertools

import pytest

from tests.conftest import write_jsonl

STRATA = ("policy_lookup", "how_to", "no_answer")


def queue_questions(n: int) -> list[dict]:
    """n question records spread over three strata; gold passage and expected answer on each."""
    rows = []
    for i in range(n):
        stratum = STRATA[i % len(STRATA)]
        rows.append({"qid": f"q-{i:04d}", "question": f"How long does plan {i} last?", "stratum": stratum,
                     "gold_text": None if stratum == "no_answer" else f"Plan {i} lasts {i} days.",
                     "expected": None if stratum == "no_answer" else f"{i} days", "grading": "rubric"})
    return rows


_runs = itertools.count(1)


@pytest.fixture
def make_run(db, tmp_path):
    """make_run(n, dataset="support-q", system="rag-secret") -> run_id: a dataset of n questions and a run
    answering all of them, imported through the services."""
    from annotation.services.datasets import questions_import
    from annotation.services.runs import run_import

    def make(n: int = 9, *, dataset: str = "support-q", system: str = "rag-secret-system") -> str:
        k = next(_runs)
        questions_import(path=write_jsonl(tmp_path / f"q{k}.jsonl", queue_questions(n)), dataset_name=dataset)
        run_id = f"run-secret-{k}"
        rows = [{"run_id": run_id, "system": system, "dataset": dataset}]
        rows += [{"qid": f"q-{i:04d}", "answer": f"answer {i}", "correct": True} for i in range(n)]
        run_import(path=write_jsonl(tmp_path / f"run{k}.jsonl", rows))
        return run_id

    return make


@pytest.fixture
def pool(make_user):
    """Annotators ann1..ann4, adjudicator adj, engineer eng (users with roles)."""
    users = {f"ann{i}": make_user(f"ann{i}", "annotator") for i in range(1, 5)}
    users["adj"] = make_user("adj", "adjudicator")
    users["eng"] = make_user("eng", "engineer")
    return users


@pytest.fixture
def make_queue(make_run, pool):
    """make_queue(n=9, overlap=2, annotators=("ann1", "ann2"), **kw) -> Queue over a fresh run."""
    from annotation.services.queues import queue_create

    def make(n: int = 9, *, overlap: int = 2, annotators=("ann1", "ann2"), **kwargs):
        run_id = make_run(n)
        return queue_create(name="q", annotators=list(annotators), overlap=overlap, run_id=run_id,
                            rubric="Correct when it states the expected answer.", seed=7, created_by=pool["eng"],
                            **kwargs)

    return make
