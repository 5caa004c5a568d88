"""The demo: a corpus of standard-library docstrings, the `stdlib-support` labelled set, two system runs,
two annotators' grades, one user per role and a blind labelling queue.

Seeding adds only what is missing, part by part, so running it again (every `make run` does) never
touches what people did since: a user who exists keeps their password and roles, a dataset with a
version keeps its versions (no re-import over the experts' published work), a corpus already loaded is
not re-imported, labels are loaded only onto runs that hold none, and the queue is opened once.
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model

from annotation.models import Dataset, Document, HumanLabel, Queue, Run
from annotation.selectors.datasets import latest_version
from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import, strata_set
from annotation.services.labels import labels_import
from annotation.services.queues import queue_create
from annotation.services.runs import run_import
from annotation.services.users import user_upsert
from evalapp.jsonl import read_jsonl
from evalapp.roles import user_roles

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo"
DATASET = "stdlib-support"
# The demo set's budget; questions.jsonl holds these shares exactly (80 questions: 32/16/12/8/8/4).
STRATA = {"single_fact": "40", "procedural": "20", "constrained": "15", "comparison": "10", "no_answer": "10",
          "ambiguous": "5"}
USERS = [
    ("expert", ["expert"]),
    ("annotator", ["annotator"]),
    ("ann1", ["annotator"]),
    ("ann2", ["annotator"]),
    ("ann3", ["annotator"]),
    ("adjudicator", ["adjudicator"]),
    ("engineer", ["engineer"]),
]
RUN_FILES = ("run_baseline.jsonl", "run_candidate.jsonl")
# A blind queue for the annotators who have not graded the demo runs yet (ann1 and ann2 have, by import).
QUEUE = {"name": "Support answers, June sample", "run_id": "demo-rag-v2", "sample": 24, "seed": 1, "overlap": 2,
         "annotators": ["annotator", "ann3"],
         "rubric": "Correct: the answer states what the gold passage says, with nothing that contradicts it. "
                   "Incorrect: wrong, contradicting the passage, or answering a question that has no answer in the corpus."}


def demo_password(username: str) -> str:
    """The demo's published password. It fails the password validators (it contains the username), so
    the demo sets it without them: these accounts exist for a laptop, never for a deployment."""
    return f"demo-{username}"


def _first_record(path: Path) -> dict:
    for _line, obj, _problem in read_jsonl(path):
        return obj or {}
    return {}


def _demo_doc_ids() -> list[str]:
    with open(DEMO_DIR / "corpus.jsonl", encoding="utf-8") as handle:
        return [json.loads(line)["doc_id"] for line in handle if line.strip()]


def _users() -> list[dict]:
    out = []
    User = get_user_model()
    for username, roles in USERS:
        user = User.objects.filter(username=username).first()
        if user is not None:
            out.append({"username": username, "roles": sorted(user_roles(user)), "password": None, "created": False})
            continue
        password = demo_password(username)
        made = user_upsert(username=username, roles=roles, password=password, validate_password=False)
        out.append({**made.as_dict(), "password": password, "created": True})
    return out


def _dataset() -> tuple[dict, dict]:
    dataset = Dataset.objects.filter(name=DATASET).first()
    version = latest_version(dataset) if dataset else None
    if version is None:
        strata = strata_set(dataset_name=DATASET, shares=STRATA)
        return strata, questions_import(path=DEMO_DIR / "questions.jsonl", dataset_name=DATASET).as_dict()
    strata = {k: float(v) for k, v in (dataset.strata_budget or {}).items()}
    return strata, {"dataset": DATASET, "dataset_hash": version.dataset_hash, "version": version.number,
                    "examples": version.entries.count(), "created": False}


def _runs() -> list[dict]:
    out = []
    for name in RUN_FILES:
        path = DEMO_DIR / name
        run = Run.objects.filter(run_id=_first_record(path).get("run_id", "")).first()
        if run is None:
            out.append({**run_import(path=path).as_dict(), "imported": True})
        else:
            out.append({"run_id": run.run_id, "answers": run.answers.count(), "dataset": DATASET,
                        "dataset_hash": run.dataset_hash, "imported": False})
    return out


def demo_seed(*, users: bool = True) -> dict:
    """Load whatever part of the demo is missing; report each part, saying what was there already."""
    payload: dict = {}
    if users:
        payload["users"] = _users()
    if Document.objects.filter(doc_id__in=_demo_doc_ids()).exists():
        payload["corpus"] = {"documents": Document.objects.count(), "chunks": 0, "retired": 0, "loaded": False}
    else:
        payload["corpus"] = {**corpus_import(path=DEMO_DIR / "corpus.jsonl").as_dict(), "loaded": True}
    payload["strata"], payload["dataset"] = _dataset()
    payload["runs"] = _runs()
    run_ids = [r["run_id"] for r in payload["runs"]]
    held = HumanLabel.objects.filter(answer__run__run_id__in=run_ids).count()
    if held:
        payload["labels"] = {"labels": held, "loaded": False}
    else:
        payload["labels"] = {**labels_import(path=DEMO_DIR / "labels.jsonl", create_users=True).as_dict(),
                             "loaded": True}
    if users:
        queue = Queue.objects.filter(name=QUEUE["name"]).first()
        created = queue is None
        queue = queue or queue_create(**QUEUE)
        payload["queue"] = {"id": queue.pk, "name": queue.name, "items": queue.size,
                            "annotators": QUEUE["annotators"], "created": created}
    return payload
