"""The two reads every label submit makes before it writes: the item locked with its answer and run (and
whether the annotator is in the pool), then the annotator's assignment on it with their label's id, verdict
and rationale. Written as SQL for the reason `candidate_rows` is: they run on every label, and composing and
compiling them with the ORM (a select_related join locking two tables beside an EXISTS, an assignment beside
three subqueries) cost 0.8 and 0.9 ms of app CPU a submit, more than the database spent answering them.

They stay two statements: on PostgreSQL a row locked after a wait is read again at its newest version, but
rows merely joined to it are not, so the assignment and label are read once the lock is held, as the
transaction that held it left them."""

from typing import NamedTuple

from django.db import connection

from annotation.models import Assignment, HumanLabel, Queue, QueueItem, QueueMember
from annotation.services.candidates import ITEM_JOIN, item_columns, item_from_row
from evalapp.db import columns_sql, row_instance


class OwnLabel(NamedTuple):
    """The annotator's label on the item's answer, as far as a submit reads it before writing."""

    id: int
    verdict: str
    rationale: str


def item_for_label(
    queue: Queue, annotator_id: int, *, item_id: int | None, item_key: str | None
) -> tuple[QueueItem, bool] | None:
    """(item, member): the queue's item named by `item_id`, else by `item_key`, with its answer and run, and
    whether the annotator is in the queue's pool. On PostgreSQL the item and its answer are locked FOR UPDATE
    (the answer's final label is refreshed from this row when the submit completes the item). None: no such
    item."""
    member = f"EXISTS (SELECT 1 FROM {QueueMember._meta.db_table} m WHERE m.queue_id = %s AND m.user_id = %s)"
    by = "qi.id" if item_id is not None else "qi.key"
    sql = f"SELECT {item_columns()}, {member} FROM {ITEM_JOIN} WHERE qi.queue_id = %s AND {by} = %s"
    if connection.vendor == "postgresql":
        sql += " FOR UPDATE OF qi, ans"
    with connection.cursor() as cursor:
        cursor.execute(sql, [queue.pk, annotator_id, queue.pk, item_id if item_id is not None else item_key])
        row = cursor.fetchone()
    if row is None:
        return None
    return item_from_row(row), bool(row[-1])


def assignment_with_label(item: QueueItem, annotator_id: int) -> tuple[Assignment, OwnLabel | None] | None:
    """The annotator's assignment on the item (one at most: unique on item and annotator) and their label on
    its answer (None when they have none); None when the item was never handed to them."""
    a, hl = Assignment._meta.db_table, HumanLabel._meta.db_table
    sql = (
        f"SELECT {columns_sql(Assignment, 'a')}, hl.id, hl.verdict, hl.rationale FROM {a} a"
        f" LEFT JOIN {hl} hl ON hl.answer_id = %s AND hl.annotator_id = a.annotator_id"
        f" WHERE a.item_id = %s AND a.annotator_id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [item.answer_id, item.pk, annotator_id])
        row = cursor.fetchone()
    if row is None:
        return None
    label_id, verdict, rationale = row[-3:]
    return row_instance(Assignment, row[:-3]), None if label_id is None else OwnLabel(label_id, verdict, rationale)
