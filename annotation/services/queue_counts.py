"""Keeping a labelling queue's pair counts and label seconds (QueuePairCount, QueueLabelSeconds) in step with
its labels, and rebuilding them from the labels (the reference) when they differ.

A write that changes what they count (a label submitted or changed, an item completed, a label revised)
runs inside `counts_kept(answer_ids)`: every queue's items on those answers are counted before and after
the write, in its transaction, and the difference is added to the kept rows with one upsert a table
(`n = n + delta`), so two submits at once never lose an increment. Counting by answer, not by item, covers
a label changed in one queue (a rework queue, say) that another queue's complete item pairs. The caller
holds the answers' rows locked (select_for_update), so no other write on them runs between the two counts.

Writes that change nothing counted need nothing: a claim, a skip, a flag or a lapsed lease (no label is
submitted), an adjudication (the item stays complete and the labels stay), a new queue (its items are open).
The label import refuses every answer a queue holds (policies.check_can_import_label).
"""

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection, transaction

from annotation.models import Queue, QueueLabelSeconds, QueuePairCount
from annotation.selectors.queue_counts import (
    PairKey,
    SecondsKey,
    kept_pairs,
    kept_seconds,
    live_counts,
    live_pairs,
    live_seconds,
)

PAIR_FIELDS = ["queue_id", "stratum", "annotator_a_id", "annotator_b_id", "verdict_a", "verdict_b"]
SECONDS_FIELDS = ["queue_id", "annotator_id", "timed", "seconds"]
# Rows an upsert statement: a rebuild of a queue with thousands of distinct label seconds stays within
# SQLite's limit on bound parameters.
ADD_BATCH = 1000


def _difference(after: dict, before: dict) -> dict:
    return {k: n for k in after.keys() | before.keys() if (n := after.get(k, 0) - before.get(k, 0))}


def _add(model, fields: list[str], delta: dict) -> None:
    """Add each key's delta to its row (made at 0 when missing): one INSERT … ON CONFLICT DO UPDATE, which
    both databases apply row by row under the row's lock."""
    if not delta:
        return
    table = model._meta.db_table
    columns = ", ".join([*fields, "n"])
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    items = sorted(delta.items())
    with connection.cursor() as cursor:
        for start in range(0, len(items), ADD_BATCH):
            part = items[start : start + ADD_BATCH]
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {', '.join([row] * len(part))}"
                f" ON CONFLICT ({', '.join(fields)}) DO UPDATE SET n = {table}.n + excluded.n",
                [v for key, n in part for v in (*key, n)],
            )


@contextmanager
def counts_kept(answer_ids: Iterable[int]) -> Iterator[None]:
    """Around a write that may change what the queues holding these answers count: the kept pair counts and
    label seconds change by exactly what the write changed. Inside the write's transaction, with the
    answers' rows locked by the caller. Two reads and at most two upserts, whatever the queue's size."""
    ids = sorted(set(answer_ids))
    pairs, seconds = live_counts(ids)
    yield
    pairs_after, seconds_after = live_counts(ids)
    _add(QueuePairCount, PAIR_FIELDS, _difference(pairs_after, pairs))
    _add(QueueLabelSeconds, SECONDS_FIELDS, _difference(seconds_after, seconds))


@dataclass(frozen=True)
class CountsCheck:
    """One queue's kept rows against the labels: the keys whose counts differ (kept, live)."""

    queue: int
    name: str
    kept: bool
    pairs: dict[PairKey, tuple[int, int]]
    seconds: dict[SecondsKey, tuple[int, int]]

    @property
    def in_step(self) -> bool:
        return self.kept and not self.pairs and not self.seconds

    def as_dict(self) -> dict:
        return {
            "queue": self.queue,
            "name": self.name,
            "kept": self.kept,
            "in_step": self.in_step,
            "pairs_differing": len(self.pairs),
            "seconds_differing": len(self.seconds),
        }


def _differing(kept: dict, live: dict) -> dict:
    return {
        k[1:]: (kept.get(k, 0), live.get(k, 0)) for k in kept.keys() | live.keys() if kept.get(k, 0) != live.get(k, 0)
    }


def _lock_counts() -> None:
    """Hold off every write to the kept rows until this transaction ends (reads go on): a submit that counted
    before the lock adds its change after the rebuild, one that added it first is waited for and then seen
    by the rebuild's counts. SQLite's writes are serialised already."""
    if connection.vendor == "postgresql":
        tables = ", ".join(m._meta.db_table for m in (QueuePairCount, QueueLabelSeconds))
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {tables} IN EXCLUSIVE MODE")


def queue_counts_check(*, queue_ids: Iterable[int] | None = None, repair: bool = False) -> list[CountsCheck]:
    """Recount each queue's pairs and label seconds from its labels (the live queries the statistics would
    otherwise run) and compare them with the kept rows; with `repair`, make the kept rows those counts and
    mark the queue kept. Returns, per queue in id order, what differed before any repair."""
    out = []
    queues = Queue.objects.order_by("pk")
    if queue_ids is not None:
        queues = queues.filter(pk__in=list(queue_ids))
    # Inside a caller's transaction (a test's) its snapshot rules already.
    own_snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    for queue_id, name, kept in queues.values_list("pk", "name", "counts_kept"):
        with transaction.atomic():
            if repair:
                _lock_counts()
            elif own_snapshot:
                # The kept rows and the labels read in one snapshot, so a submit committing between the two
                # reads is never taken for drift; nothing is held off.
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            pairs, seconds = live_pairs(queue_id=queue_id), live_seconds(queue_id=queue_id)
            check = CountsCheck(
                queue=queue_id,
                name=name,
                kept=kept,
                pairs=_differing(kept_pairs(queue_id), pairs),
                seconds=_differing(kept_seconds(queue_id), seconds),
            )
            if repair and not check.in_step:
                QueuePairCount.objects.filter(queue_id=queue_id).delete()
                QueueLabelSeconds.objects.filter(queue_id=queue_id).delete()
                _add(QueuePairCount, PAIR_FIELDS, pairs)
                _add(QueueLabelSeconds, SECONDS_FIELDS, seconds)
                Queue.objects.filter(pk=queue_id).update(counts_kept=True)
        out.append(check)
    return out
