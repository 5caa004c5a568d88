"""seed_demo: load the demo (a corpus of standard-library docstrings, the `stdlib-support` labelled
set, two system runs and two annotators' grades) and one user per role. Safe to run again."""
from pathlib import Path

from annotation.models import Queue
from annotation.selectors.runs import run_get
from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import, strata_set
from annotation.services.labels import labels_import
from annotation.services.queues import queue_create
from annotation.services.runs import run_import
from annotation.services.users import user_upsert
from evalapp.commands import EvalCommand
from evalapp.errors import NotFound
from evalapp.jsonl import read_jsonl

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
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


def _run_id(path: Path) -> str:
    """The run_id on the run file's first line (the run record)."""
    for _line, obj, _problem in read_jsonl(path):
        return (obj or {}).get("run_id", "")
    return ""


class Command(EvalCommand):
    help = ("Load the demo: users (one per role, password demo-USERNAME), the stdlib corpus, the stdlib-support "
            "labelled set with its strata budget, runs demo-rag-v1 and demo-rag-v2, and ann1/ann2's labels. "
            "Running it again changes nothing.")

    def add_command_arguments(self, parser):
        parser.add_argument("--no-users", action="store_true",
                            help="do not create or touch the demo users (and print no passwords)")

    def run(self, **o):
        payload: dict = {}
        if not o["no_users"]:
            payload["users"] = []
            for username, roles in USERS:
                password = demo_password(username)
                user = user_upsert(username=username, roles=roles, password=password, validate_password=False)
                payload["users"].append({**user.as_dict(), "password": password})
        payload["corpus"] = corpus_import(path=DEMO_DIR / "corpus.jsonl").as_dict()
        payload["strata"] = strata_set(dataset_name=DATASET, shares=STRATA)
        payload["dataset"] = questions_import(path=DEMO_DIR / "questions.jsonl", dataset_name=DATASET).as_dict()
        payload["runs"] = []
        for name in RUN_FILES:
            path = DEMO_DIR / name
            try:
                run = run_get(_run_id(path))
            except NotFound:
                result = run_import(path=path).as_dict()
                payload["runs"].append({**result, "imported": True})
                continue
            payload["runs"].append({"run_id": run.run_id, "answers": run.answers.count(), "dataset": DATASET,
                                    "dataset_hash": run.dataset_hash, "imported": False})
        payload["labels"] = labels_import(path=DEMO_DIR / "labels.jsonl", create_users=True).as_dict()
        if not o["no_users"]:
            queue = Queue.objects.filter(name=QUEUE["name"]).first() or queue_create(**QUEUE)
            payload["queue"] = {"id": queue.pk, "name": queue.name, "items": queue.size, "annotators": QUEUE["annotators"]}
        return payload, 0

    def text(self, p):
        lines = []
        if "users" in p:
            lines.append("users (username / password, roles):")
            lines += [f"  {u['username']:<12} {u['password']:<18} {', '.join(u['roles'])}" for u in p["users"]]
        c, d = p["corpus"], p["dataset"]
        lines.append(f"corpus: {c['documents']} documents, {c['chunks']} new chunks, {c['retired']} retired")
        state = "new version" if d["created"] else "unchanged"
        lines.append(f"dataset {d['dataset']} v{d['version']} {d['dataset_hash']} ({state}): {d['examples']} questions")
        lines.append("strata: " + ", ".join(f"{k} {v:g}%" for k, v in p["strata"].items()))
        for r in p["runs"]:
            lines.append(f"run {r['run_id']}: {r['answers']} answers ({'imported' if r['imported'] else 'already there'})")
        lab = p["labels"]
        lines.append(f"labels: {lab['labels']} ({lab['created']} new, {lab['changed']} changed, {lab['unchanged']} unchanged)")
        if "queue" in p:
            q = p["queue"]
            lines.append(f"queue {q['id']} {q['name']!r}: {q['items']} items for {', '.join(q['annotators'])}")
        return "\n".join(lines)
