"""Label import and queue creation over labelled answers, SQLite and PostgreSQL, each against its limit.

For each size (labels; the answers are half as many, two annotators each):

  build    a dataset version and a run answering every question (through import_questions and import_run),
           six annotators, and an earlier grading pass (through import_labels, then a few adjudications):
           a tenth of the answers already carry one annotator's label, half of those the file repeats
           unchanged and half it replaces (--replace, with a reason). Not timed.
  import   `labels_import` over the file (read, validated, facts gathered, labels, history and final labels
           written, committed), timed in its own process on a copy of the built database.
  limit    on another copy, the same rows written the plainest way: executemany of the new label rows, of
           the replaced label rows (by id), of the event rows, then one set-based UPDATE of the final labels,
           committed. The file is read and the ids looked up before the clock starts: the limit is the
           database's share alone. Both sides run in a fresh process, timed around the call with its commit.

Queue creation: a run of `--queue` answers, each labelled once (a final label by a single annotator); the
timed call is `queue_create` over the whole run with overlap 2 (so every final label is withdrawn); its
limit is executemany of the queue item rows plus one set-based UPDATE of the final labels.

Prints seconds, the limit's seconds and their ratio (target: within 3x; 200,000 labels in under 20 s).
On PostgreSQL the import writes its rows with COPY, which beats the executemany of the limit (Django binds
values on the client, a statement a row): a ratio below 1 there is expected.

    .venv/bin/python bench/label_import_bench.py [--sizes 10000 200000] [--queue 10000] [--no-postgres]
    .venv/bin/python bench/label_import_bench.py --sizes --queue 10000     # queue creation only
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
PG_PREFIX = "evalapp_la_bench_"
ANNOTATORS = [f"ann{i}" for i in range(1, 7)]
STRATA = ["single_fact", "procedural", "constrained", "comparison", "no_answer", "ambiguous"]
REASON = "second pass of the grading audit"


# Data, written to files by the parent ---------------------------------------------------------------------


def _qid(i: int) -> str:
    return f"q-{i:07d}"


def _pair(i: int) -> tuple[str, str]:
    a = i % 6
    return ANNOTATORS[a], ANNOTATORS[(a + 1 + (i // 6) % 5) % 6]


def _truth(i: int) -> str:
    return "correct" if (i * 7919) % 10 < 7 else "incorrect"


def _flip(verdict: str) -> str:
    return "incorrect" if verdict == "correct" else "correct"


def _write(path: Path, rows) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    return path


def make_files(tmp: Path, answers: int, run_id: str) -> dict[str, Path]:
    questions = (
        {
            "qid": _qid(i),
            "question": f"how long is the trial number {i} on the legacy plan",
            "stratum": STRATA[i % 6],
            "gold_text": f"Trials of kind {i} run for thirty (30) days.",
            "expected": "30 days",
            "grading": "rubric",
        }
        for i in range(answers)
    )
    run = [{"run_id": run_id, "system": "rag-bench", "dataset": "bench", "started_at": "2026-06-07T02:00:00Z"}]
    run += [{"qid": _qid(i), "answer": f"A month, for plan {i}.", "correct": i % 4 != 0} for i in range(answers)]
    earlier = []
    for i in range(answers):
        first, _second = _pair(i)
        if i % 10 == 0:  # the file repeats this label as it is
            earlier.append({"run_id": run_id, "qid": _qid(i), "annotator": first, "verdict": _truth(i)})
        elif i % 10 == 5:  # the file replaces this one
            earlier.append({"run_id": run_id, "qid": _qid(i), "annotator": first, "verdict": _flip(_truth(i))})
    labels = []
    for i in range(answers):
        first, second = _pair(i)
        at = f"2026-06-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        one = {"run_id": run_id, "qid": _qid(i), "annotator": first, "verdict": _truth(i), "labelled_at": at}
        if i % 3 == 0 and i % 10 != 0:
            one["rationale"] = f"states the {i % 40} day term"
        two = {
            "run_id": run_id,
            "qid": _qid(i),
            "annotator": second,
            "verdict": _flip(_truth(i)) if i % 9 == 4 else _truth(i),  # about one answer in nine disputed
            "labelled_at": at,
        }
        labels += [one, two]
    return {
        "questions": _write(tmp / f"questions-{answers}.jsonl", questions),
        "run": _write(tmp / f"run-{answers}.jsonl", run),
        "earlier": _write(tmp / f"earlier-{answers}.jsonl", earlier),
        "labels": _write(tmp / f"labels-{answers}.jsonl", labels),
        "single": _write(
            tmp / f"single-{answers}.jsonl",
            (
                {"run_id": run_id, "qid": _qid(i), "annotator": _pair(i)[0], "verdict": _truth(i)}
                for i in range(answers)
            ),
        ),
    }


# The child: one step in a fresh process ---------------------------------------------------------------------


def _django():
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def child_build(files: dict[str, str], kind: str) -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotation.models import Answer
    from annotation.services.datasets import questions_import
    from annotation.services.label_import import labels_import
    from annotation.services.labels import adjudication_record
    from annotation.services.runs import run_import
    from annotation.services.users import user_upsert

    for name in ANNOTATORS:
        user_upsert(username=name, roles=["annotator"])
    user_upsert(username="adj", roles=["adjudicator"])
    questions_import(path=files["questions"], dataset_name="bench")
    run_import(path=files["run"])
    if kind == "queue":
        labels_import(path=files["single"])
        return {}
    labels_import(path=files["earlier"])
    from django.contrib.auth import get_user_model

    adjudicator = get_user_model().objects.get(username="adj")
    # A few earlier decisions, which the import must leave standing as the final label.
    for answer in Answer.objects.filter(labels__isnull=False).order_by("pk")[::20]:
        adjudication_record(answer=answer, adjudicator=adjudicator, verdict="incorrect", reason="settled earlier")
    return {}


def child_import(files: dict[str, str], run_id: str) -> dict:
    from annotation.services.label_import import labels_import

    start = time.perf_counter()
    result = labels_import(path=files["labels"], replace=True, reason=REASON)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, **result.as_dict()}


def _limit_params(files, run_id):
    """The rows the import writes, worked out before the clock starts."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from django.utils.dateparse import parse_datetime

    from annotation.models import Answer, HumanLabel

    ops = connection.ops
    users = dict(get_user_model().objects.values_list("username", "pk"))
    answers = dict(Answer.objects.filter(run__run_id=run_id).values_list("qid", "pk"))
    existing = {
        (a, u): (pk, v, r)
        for pk, a, u, v, r in HumanLabel.objects.values_list("pk", "answer_id", "annotator_id", "verdict", "rationale")
    }
    now = ops.adapt_datetimefield_value(timezone.now())
    fresh, changed, events = [], [], []
    with open(files["labels"], encoding="utf-8") as handle:
        for text in handle:
            line = json.loads(text)
            answer, annotator = answers[line["qid"]], users[line["annotator"]]
            at = ops.adapt_datetimefield_value(parse_datetime(line["labelled_at"]))
            rationale = line.get("rationale", "")
            current = existing.get((answer, annotator))
            if current is not None and current[1] == line["verdict"] and rationale in ("", current[2]):
                continue
            if current is None:
                fresh.append((answer, annotator, line["verdict"], rationale, "import", at, None, 1))
                events.append((answer, annotator, "", line["verdict"], rationale, "import", 1, "", None, now))
            else:
                changed.append((line["verdict"], rationale or current[2], "import", at, current[0]))
                events.append(
                    (answer, annotator, current[1], line["verdict"], rationale, "import", 1, REASON, None, now)
                )
    return fresh, changed, events, now


FINAL_UPDATE = """
    UPDATE annotation_answer SET
        final_verdict = COALESCE((SELECT MIN(h.verdict) FROM annotation_humanlabel h
                                  WHERE h.answer_id = annotation_answer.id HAVING COUNT(DISTINCT h.verdict) = 1), ''),
        final_source = 'agreement', final_changed_at = %s
    WHERE run_id = (SELECT id FROM annotation_run WHERE run_id = %s)
"""


def child_limit(files: dict[str, str], run_id: str) -> dict:
    from django.db import connection, transaction

    fresh, changed, events, now = _limit_params(files, run_id)
    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO annotation_humanlabel (answer_id, annotator_id, verdict, rationale, source, labelled_at,"
            " active_seconds, round) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            fresh,
        )
        cursor.executemany(
            "UPDATE annotation_humanlabel SET verdict = %s, rationale = %s, source = %s, labelled_at = %s WHERE id = %s",
            changed,
        )
        cursor.executemany(
            "INSERT INTO annotation_labelevent (answer_id, annotator_id, old_verdict, new_verdict, rationale, source,"
            ' round, reason, by_id, "at") VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)',
            events,
        )
        cursor.execute(FINAL_UPDATE, [now, run_id])
    return {"seconds": time.perf_counter() - start, "labels": len(fresh) + len(changed), "events": len(events)}


def child_queue(files: dict[str, str], run_id: str) -> dict:
    from annotation.services.queues import queue_create

    start = time.perf_counter()
    queue = queue_create(name="bench queue", annotators=ANNOTATORS[:3], overlap=2, run_id=run_id, seed=1)
    return {"seconds": time.perf_counter() - start, "items": queue.size}


def child_queue_limit(files: dict[str, str], run_id: str) -> dict:
    import random

    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Answer, Queue, QueueMember

    queue = Queue.objects.create(name="limit", kind=Queue.KIND_LABELLING, overlap=2, lease_seconds=1800, seed=1)
    QueueMember.objects.bulk_create([])
    answers = list(Answer.objects.filter(run__run_id=run_id).order_by("qid").values_list("pk", flat=True))
    positions = list(range(len(answers)))
    random.Random(1).shuffle(positions)
    rows = [(queue.pk, a, "", p) for a, p in zip(answers, positions, strict=True)]
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    columns = [f.column for f in Queue._meta.get_field("items").related_model._meta.concrete_fields if f.column != "id"]
    defaults = _queue_item_defaults(columns)
    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO annotation_queueitem ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
            [defaults(row) for row in rows],
        )
        cursor.execute(
            "UPDATE annotation_answer SET final_verdict = '', final_source = '', final_changed_at = %s"
            " WHERE id IN (SELECT answer_id FROM annotation_queueitem WHERE queue_id = %s)",
            [now, queue.pk],
        )
    return {"seconds": time.perf_counter() - start, "items": len(rows)}


def _queue_item_defaults(columns):
    """A queue item row in `columns` order from (queue, answer, stratum, position), the rest at their defaults."""
    from annotation.models import QueueItem

    fields = {f.column: f for f in QueueItem._meta.concrete_fields}
    from django.db import connection

    template = {}
    for column in columns:
        field = fields[column]
        if field.has_default():
            template[column] = field.get_db_prep_save(field.get_default(), connection)
        else:
            template[column] = None

    def row(values):
        queue, answer, stratum, position = values
        out = dict(template, queue_id=queue, answer_id=answer, stratum=stratum, position=position)
        if "key" in out:
            out["key"] = f"{queue}-{answer}"
        return [out[c] for c in columns]

    return row


STEPS = {
    "build": child_build,
    "import": child_import,
    "limit": child_limit,
    "queue": child_queue,
    "queue-limit": child_queue_limit,
}


def child(step: str, payload: str) -> None:
    _django()
    args = json.loads(payload)
    out = STEPS[step](args["files"], args["kind"]) if step == "build" else STEPS[step](args["files"], args["run_id"])
    print(json.dumps(out))


# The parent: databases, copies and the table ---------------------------------------------------------------


class Backend:
    def __init__(self, name: str, tmp: Path):
        self.name, self.tmp = name, tmp

    def url(self, tag: str) -> str:
        if self.name == "sqlite":
            return f"sqlite:///{self.tmp / (tag + '.sqlite3')}"
        return f"postgres://postgres@127.0.0.1:5432/{PG_PREFIX}{tag}"

    def fresh(self, tag: str) -> None:
        if self.name == "sqlite":
            (self.tmp / f"{tag}.sqlite3").unlink(missing_ok=True)
            return
        self._admin(f'DROP DATABASE IF EXISTS "{PG_PREFIX}{tag}" WITH (FORCE)', f'CREATE DATABASE "{PG_PREFIX}{tag}"')

    def copy(self, source: str, tag: str) -> None:
        if self.name == "sqlite":
            shutil.copyfile(self.tmp / f"{source}.sqlite3", self.tmp / f"{tag}.sqlite3")
            return
        self._admin(
            f'DROP DATABASE IF EXISTS "{PG_PREFIX}{tag}" WITH (FORCE)',
            f'CREATE DATABASE "{PG_PREFIX}{tag}" TEMPLATE "{PG_PREFIX}{source}"',
        )
        # Fresh planner statistics, as a database in use has (a copy starts with the template's).
        self._run(tag, "ANALYZE")

    def drop(self, tag: str) -> None:
        if self.name == "sqlite":
            (self.tmp / f"{tag}.sqlite3").unlink(missing_ok=True)
        else:
            self._admin(f'DROP DATABASE IF EXISTS "{PG_PREFIX}{tag}" WITH (FORCE)')

    def _admin(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            for statement in statements:
                conn.execute(statement)

    def _run(self, tag: str, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url(tag), autocommit=True) as conn:
            conn.execute(statement)


def step(backend: Backend, tag: str, name: str, payload: dict) -> dict:
    # DEBUG off as in production: Django's debug cursor would otherwise keep every SQL statement.
    env = {
        **os.environ,
        "DATABASE_URL": backend.url(tag),
        "EVALAPP_VAR_DIR": str(backend.tmp / f"var-{backend.name}"),
        "DEBUG": "false",
        "SECRET_KEY": "bench-only-secret",
        "LOG_LEVEL": "ERROR",
    }
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, json.dumps(payload)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"{backend.name} {name} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(backend: Backend, what: str, files: dict, run_id: str, kind: str, timed: str, limit: str):
    payload = {"files": {k: str(v) for k, v in files.items()}, "run_id": run_id, "kind": kind}
    base = f"{kind}{what}"
    backend.fresh(base)
    start = time.perf_counter()
    step(backend, base, "build", payload)
    built = time.perf_counter() - start
    results = {}
    for name in (timed, limit):
        backend.copy(base, f"{base}_{name.replace('-', '_')}")
        results[name] = step(backend, f"{base}_{name.replace('-', '_')}", name, payload)
        backend.drop(f"{base}_{name.replace('-', '_')}")
    backend.drop(base)
    return built, results[timed], results[limit]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[10_000, 200_000], help="numbers of labels (none: queue only)"
    )
    parser.add_argument("--queue", type=int, default=10_000, help="answers in the queue (0: skip)")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("STEP", "PAYLOAD"))
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        backends = [Backend("sqlite", tmp)]
        if not args.no_postgres:
            try:
                Backend("postgres", tmp)._admin("SELECT 1")
                backends.append(Backend("postgres", tmp))
            except Exception as exc:  # noqa: BLE001  a bench reports what it could not measure
                print(f"(PostgreSQL not measured: {exc})")
        jobs = [(f"{n:,} labels", n // 2, "labels", "import", "limit") for n in args.sizes]
        if args.queue:
            jobs.append((f"queue of {args.queue:,}", args.queue, "queue", "queue", "queue-limit"))
        print(f"{'backend':9} {'what':18} {'build s':>8} {'seconds':>8} {'limit s':>8} {'ratio':>6}  written")
        for what, answers, kind, timed, limit in jobs:
            run_id = f"bench-{answers}"
            files = make_files(tmp, answers, run_id)
            for backend in backends:
                built, got, floor = measure(backend, str(answers), files, run_id, kind, timed, limit)
                written = (
                    f"{got['created']:,} new, {got['replaced']:,} replaced, {got['unchanged']:,} unchanged"
                    if kind == "labels"
                    else f"{got['items']:,} items"
                )
                print(
                    f"{backend.name:9} {what:18} {built:8.1f} {got['seconds']:8.2f} {floor['seconds']:8.2f} "
                    f"{got['seconds'] / floor['seconds']:6.2f}  {written}",
                    flush=True,
                )
        print("target: ratio within 3x of the limit; 200,000 labels in under 20 s on each database")


if __name__ == "__main__":
    main()
