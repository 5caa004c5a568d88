"""Fixtures for the annotation tests: a labelled set with strata and a run over it, built through the
services (questions_import, run_import, user_upsert), and annotation queues over that run."""

import itertools
import json

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Adjudication, HumanLabel, LabelEvent
from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import
from tests.conftest import write_jsonl

STRATA = ("policy_lookup", "how_to", "no_answer")


def queue_questions(n: int) -> list[dict]:
    """n question records spread over three strata; gold passage and expected answer on each."""
    rows = []
    for i in range(n):
        stratum = STRATA[i % len(STRATA)]
        rows.append(
            {
                "qid": f"q-{i:04d}",
                "question": f"How long does plan {i} last?",
                "stratum": stratum,
                "gold_text": None if stratum == "no_answer" else f"Plan {i} lasts {i} days.",
                "expected": None if stratum == "no_answer" else f"{i} days",
                "grading": "rubric",
            }
        )
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
        return queue_create(
            name="q",
            annotators=list(annotators),
            overlap=overlap,
            run_id=run_id,
            rubric="Correct when it states the expected answer.",
            seed=7,
            created_by=pool["eng"],
            **kwargs,
        )

    return make


def label(run_id, qid, annotator, verdict, **extra):
    return {"run_id": run_id, "qid": qid, "annotator": annotator, "verdict": verdict, **extra}


def counts():
    return (
        HumanLabel.objects.count(),
        LabelEvent.objects.count(),
        Adjudication.objects.count(),
        get_user_model().objects.count(),
    )


def labels_of(run_id):
    return sorted(
        HumanLabel.objects.filter(answer__run__run_id=run_id).values_list(
            "answer__qid", "annotator__username", "verdict", "rationale", "source"
        )
    )


@pytest.fixture
def run_id(make_run):
    return make_run(6)


CORPUS = [
    {
        "doc_id": "kb:PRICE",
        "title": "Legacy plans",
        "source": "confluence",
        "text": "Plans sold before 2024 are legacy plans.\n\n"
        "Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert.\n\n"
        "Legacy Team plans bill monthly.",
    },
    {
        "doc_id": "kb:SEC",
        "title": "Security",
        "source": "wiki",
        "text": "Passwords rotate every ninety days.\n\nSingle sign-on is available on Enterprise plans.",
    },
]


TRIAL = "Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert."


QUESTIONS = [
    {
        "qid": "q-1",
        "question": "how long is the legacy trial",
        "stratum": "policy",
        "asked_by": "support",
        "gold_doc_id": "kb:PRICE",
        "gold_chunk_id": "kb:PRICE#0001",
        "gold_text": TRIAL,
        "labelled_by": "ann",
    },
    {"qid": "q-2", "question": "how often do passwords rotate", "stratum": "policy"},
    {"qid": "q-3", "question": "what is the refund policy for mars", "stratum": "no_answer"},
    {"qid": "q-4", "question": "sso or passwords, which is safer", "stratum": "comparison"},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def ds(db, tmp_path):
    corpus_import(path=write(tmp_path / "c.jsonl", CORPUS))
    questions_import(path=write(tmp_path / "q.jsonl", QUESTIONS), dataset_name="support")
    from annotation.models import Dataset

    return Dataset.objects.get(name="support")


def import_disputed_run(tmp_path, *, n: int = 6, disputed=(1, 4), run_id: str = "run-graded", dataset="graded"):
    """A dataset of n rubric questions and a run answering them without a harness score, graded outside
    the app by ann1 and ann2 (imported labels): they agree ("correct") except on the `disputed` indices,
    where ann1 says correct and ann2 incorrect. The annotators must exist. Returns the run id."""
    from annotation.services.label_import import labels_import
    from annotation.services.runs import run_import

    questions_import(path=write(tmp_path / f"{run_id}-q.jsonl", queue_questions(n)), dataset_name=dataset)
    rows = [{"run_id": run_id, "system": "rag-secret-system", "dataset": dataset}]
    rows += [{"qid": f"q-{i:04d}", "answer": f"answer {i}"} for i in range(n)]
    run_import(path=write(tmp_path / f"{run_id}.jsonl", rows))
    lines = []
    for i in range(n):
        lines.append(label(run_id, f"q-{i:04d}", "ann1", "correct", labelled_at="2026-05-20T10:00:00Z"))
        verdict = "incorrect" if i in disputed else "correct"
        lines.append(label(run_id, f"q-{i:04d}", "ann2", verdict, labelled_at="2026-05-20T11:00:00Z"))
    labels_import(path=write(tmp_path / f"{run_id}-labels.jsonl", lines))
    return run_id
