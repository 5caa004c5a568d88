"""A small world for the bad-input tests, built through the services: the corpus and the `support`
dataset, a run `r1` over it with labels, a blind queue, a replay judge version; and `counts()`, the
row count of every table an import or a form could write, to assert that a refusal wrote nothing."""

import io

import pytest
from django.core.management import call_command

from tests.conftest import write_jsonl

RUN = {
    "run_id": "r1",
    "system": "rag-v2",
    "dataset": "support",
    "model_snapshot": "m",
    "prompt_hash": "p",
    "evaluator_version": "e",
    "evaluator_config_hash": "c",
    "harness_commit": "h",
    "index_id": "i",
    "started_at": "2026-06-07T02:00:00Z",
}
ANSWERS = [{"qid": q, "answer": f"answer {q}", "correct": True} for q in ("q-0001", "q-0002", "q-0003")]


def run_cmd(*args):
    """(exit code, stdout, stderr) of a management command; a traceback fails the test."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def counts() -> dict[str, int]:
    """Rows in every table user input can reach."""
    from django.contrib.auth import get_user_model

    from annotation import models as a
    from calibration import models as c

    tables = [
        a.Document,
        a.Chunk,
        a.Dataset,
        a.DatasetVersion,
        a.Example,
        a.VersionEntry,
        a.WorkingExample,
        a.EditAudit,
        a.Run,
        a.Answer,
        a.HumanLabel,
        a.LabelEvent,
        a.Adjudication,
        a.Queue,
        a.QueueItem,
        a.QueueMember,
        a.QueueRubric,
        a.Assignment,
        a.RelabelAudit,
        c.Judge,
        c.JudgeVersion,
        c.ImportedVerdict,
        c.CalibrationSample,
        c.CalibrationRun,
        c.GradingRun,
        get_user_model(),
    ]
    return {t.__name__: t.objects.count() for t in tables}


@pytest.fixture
def world(db, loaded, tmp_path, make_user):
    """The corpus, `support` v1, run r1 with ann1's labels, queue (ann1, ann2; overlap 2), replay judge version."""
    from annotation.services.label_import import labels_import
    from annotation.services.queues import queue_create
    from annotation.services.runs import run_import
    from calibration.services.judges import judge_version_create

    users = {
        "eng": make_user("eng", "engineer", "adjudicator", "expert"),
        "ann1": make_user("ann1", "annotator"),
        "ann2": make_user("ann2", "annotator"),
    }
    run_import(path=write_jsonl(tmp_path / "run.jsonl", [RUN, *ANSWERS]))
    labels_import(
        path=write_jsonl(
            tmp_path / "labels.jsonl", [{"run_id": "r1", "qid": "q-0001", "annotator": "ann1", "verdict": "correct"}]
        )
    )
    queue = queue_create(
        name="nightly", annotators=["ann1", "ann2"], overlap=2, run_id="r1", seed=3, created_by=users["eng"]
    )
    version, _ = judge_version_create(judge_name="replayed", backend="replay")
    return {"users": users, "queue": queue, "judge_version": version, "tmp": tmp_path}


@pytest.fixture
def api(world):
    """An API client for the engineer (who is also adjudicator and expert), authenticated by token."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=world['users']['eng']).key}")
    return client
