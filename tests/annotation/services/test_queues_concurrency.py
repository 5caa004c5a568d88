"""Concurrency: many threads as annotators draining one queue at once. Every item ends with exactly N
labels from N distinct annotators, and no label is lost.

PostgreSQL: 20 threads as 10 annotators (two browser tabs each) over a 500-item queue with N = 2,
exercising SELECT ... FOR UPDATE SKIP LOCKED. SQLite: the serialised path (BEGIN IMMEDIATE), smaller.
"""

import hashlib
import threading
from collections import Counter

import pytest
from django.db import close_old_connections, connection

from annotation.models import Assignment, HumanLabel, LabelEvent, QueueItem
from annotation.services.claims import Conflict, queue_next
from annotation.services.labelling import label_submit
from annotation.services.queue_counts import queue_counts_check
from annotation.services.queues import queue_create


def verdict_for(item_id: int, username: str) -> str:
    return "correct" if hashlib.sha256(f"{item_id}:{username}".encode()).digest()[0] % 3 else "incorrect"


def drain_concurrently(queue, users, threads_per_user: int):
    """Run threads_per_user threads per annotator, each looping next -> label until told nothing is left."""
    created, conflicts, errors = Counter(), Counter(), []
    lock = threading.Lock()
    start = threading.Barrier(len(users) * threads_per_user)

    def work(user):
        try:
            start.wait()
            while True:
                claim = queue_next(queue=queue, annotator=user)
                if claim is None:
                    return
                try:
                    _label, outcome = label_submit(
                        queue=queue,
                        item_id=claim.item.pk,
                        annotator=user,
                        verdict=verdict_for(claim.item.pk, user.username),
                    )
                except Conflict:
                    # The sibling tab of the same annotator completed the item first.
                    with lock:
                        conflicts[user.username] += 1
                    continue
                if outcome == "created":
                    with lock:
                        created[claim.item.pk] += 1
        except Exception as exc:  # pragma: no cover - reported below
            with lock:
                errors.append(repr(exc))
        finally:
            close_old_connections()
            connection.close()

    workers = [threading.Thread(target=work, args=(u,)) for u in users for _ in range(threads_per_user)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return created, conflicts, errors


def assert_exact(queue, n_items: int, overlap: int, created: Counter):
    items = list(QueueItem.objects.filter(queue=queue))
    assert len(items) == n_items
    for item in items:
        annotators = list(Assignment.objects.filter(item=item, state="done").values_list("annotator_id", flat=True))
        assert len(annotators) == overlap and len(set(annotators)) == overlap, item.pk
        labels = list(HumanLabel.objects.filter(answer_id=item.answer_id).values_list("annotator_id", "verdict"))
        assert sorted(a for a, _ in labels) == sorted(annotators)
        assert (item.taken, item.done) == (overlap, overlap)
        assert item.status in ("agreed", "disputed")
        assert created[item.pk] == overlap
    # No label lost or doubled: one label per successful first submit, one history event each.
    assert HumanLabel.objects.count() == n_items * overlap == sum(created.values())
    assert LabelEvent.objects.filter(old_verdict="").count() == n_items * overlap
    assert Assignment.objects.filter(queue=queue, state="claimed").count() == 0
    # The kept pair counts and label seconds took every submit's change: none lost to a race.
    assert [c.in_step for c in queue_counts_check(queue_ids=[queue.pk])] == [True]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_postgres_20_threads_10_annotators_500_items(make_run, make_user):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")
    users = [make_user(f"t{i}", "annotator") for i in range(10)]
    run_id = make_run(500)
    queue = queue_create(name="race", annotators=[u.username for u in users], overlap=2, run_id=run_id, seed=1)
    created, _conflicts, errors = drain_concurrently(queue, users, threads_per_user=2)
    assert errors == []
    assert_exact(queue, 500, 2, created)


SQLITE_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from pathlib import Path
from annotation.models import QueueItem
from annotation.services.queues import queue_create
from annotation.services.users import user_upsert
from annotation.services.datasets import questions_import
from annotation.services.runs import run_import
from django.contrib.auth import get_user_model
from tests.annotation.conftest import queue_questions
from tests.annotation.services.test_queues_concurrency import assert_exact, drain_concurrently
from tests.conftest import write_jsonl
tmp = Path(TMP)
questions_import(path=write_jsonl(tmp / "q.jsonl", queue_questions(60)), dataset_name="d")
run_import(path=write_jsonl(tmp / "r.jsonl", [{"run_id": "r", "system": "s", "dataset": "d"}]
           + [{"qid": f"q-{i:04d}", "answer": "a"} for i in range(60)]))
users = [get_user_model().objects.get(username=user_upsert(username=f"s{i}", roles=["annotator"]).username)
         for i in range(5)]
queue = queue_create(name="race", annotators=[u.username for u in users], overlap=2, run_id="r", seed=1)
created, conflicts, errors = drain_concurrently(queue, users, threads_per_user=2)
assert errors == [], errors
assert_exact(queue, 60, 2, created)
print("OK", sum(created.values()))
"""


def test_sqlite_serialised_path_under_threads(tmp_path):
    """A file database (the in-memory test database cannot be shared by threads with busy waiting), so this
    runs in a child process: BEGIN IMMEDIATE serialises the writers, 10 threads as 5 annotators."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalapp.settings.test",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'race.sqlite3'}",
        "TEST_DATABASE_NAME": "",
    }
    script = f"TMP = {str(tmp_path)!r}\n" + SQLITE_SCRIPT
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["OK", "120"]
