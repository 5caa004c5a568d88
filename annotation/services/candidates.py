"""Which item "next" hands an annotator: the open items they may take at each fill level (read without a
lock), and the first of them locked. Both run on every "next", so they are written as SQL (see
`candidate_rows`); annotation.services.claims decides the order and writes the claim."""

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection

from annotation.models import Answer, Assignment, Example, HumanLabel, Queue, QueueItem, Run, VersionEntry
from annotation.services.queues import _digest
from evalapp.db import columns_sql, row_instance
from evalapp.keyset import ids_in

# Candidates read per fill level before locking one: enough to shuffle, few enough to stay cheap.
WINDOW = 32

# An annotator's row in these states keeps the item from being handed to them (again).
BLOCKING = (Assignment.CLAIMED, Assignment.DONE, Assignment.SKIPPED)


def candidate_rows(queue: Queue, annotator, levels: Iterable[int], offset: int) -> list[tuple[int, int, int]]:
    """(id, taken, position) of up to WINDOW open items per fill level in `levels` this annotator may take,
    from their offset on and then from the start: one statement on both databases, a UNION ALL of bounded
    index scans on (queue, status, taken, position).

    Written as SQL rather than built by the ORM: it runs on every "next", and composing and compiling the
    same four-part union with its subqueries cost more CPU than the database spent answering it (6.9 ms
    of app CPU a call at 100,000 items on PostgreSQL, against its 5 ms round trip).
    An item is a candidate when nobody's label of its answer is this annotator's (a rework queue hands its
    annotator back their own labels, so it skips that test) and this annotator holds no blocking row on it;
    an item nobody holds (level 0) can still carry this annotator's skip: it is never theirs again."""
    item, label, assignment = (m._meta.db_table for m in (QueueItem, HumanLabel, Assignment))
    parts: list[str] = []
    params: list[object] = []
    for level in levels:
        states = BLOCKING if level > 0 else (Assignment.SKIPPED,)
        where = "qi.queue_id = %s AND qi.status = %s AND qi.taken = %s"
        where_params: list[object] = [queue.pk, QueueItem.OPEN, level]
        if queue.kind != Queue.KIND_REWORK:
            where += (
                f" AND NOT EXISTS (SELECT 1 FROM {label} hl WHERE hl.annotator_id = %s AND hl.answer_id = qi.answer_id)"
            )
            where_params.append(annotator.pk)
        where += (
            f" AND NOT EXISTS (SELECT 1 FROM {assignment} a WHERE a.annotator_id = %s AND a.item_id = qi.id"
            f" AND a.state IN ({', '.join(['%s'] * len(states))}))"
        )
        where_params += [annotator.pk, *states]
        for side in (">=", "<") if offset > 0 else (">=",):
            parts.append(
                f"SELECT * FROM (SELECT qi.id, qi.taken, qi.position FROM {item} qi WHERE {where}"
                f" AND qi.position {side} %s ORDER BY qi.position LIMIT {WINDOW}) c{len(parts)}"
            )
            params += [*where_params, offset]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        return [tuple(row) for row in cursor.fetchall()]


def level_ids(rows: list[tuple[int, int, int]], level: int, offset: int) -> list[int]:
    """The level's candidate ids in walking order: from the annotator's offset on, then round from the start."""
    mine = sorted((r for r in rows if r[1] == level), key=lambda r: (r[2] < offset, r[2]))
    return [r[0] for r in mine[:WINDOW]]


def candidates_by_level(queue: Queue, annotator, offset: int) -> list[int]:
    """Every fill level's candidates (fullest level first), each level in this annotator's order, read in
    one statement."""
    levels = range(queue.overlap - 1, -1, -1)
    rows = candidate_rows(queue, annotator, levels, offset)
    per_level = [level_ids(rows, level, offset) for level in levels]
    return [pk for ids in per_level for pk in sorted(ids, key=lambda pk: _digest(queue.seed, pk, annotator.pk))]


def lock_first(queue: Queue, annotator, ids: list[int]) -> tuple[QueueItem | None, bool]:
    """(item, contended): the first of `ids` (in that order) still eligible for this annotator that no other
    transaction holds, locked, with its answer and run loaded and `mine_expired` (a lapsed claim of theirs
    on it) and `question_record` (the question's canonical JSON, for the payload) set; contended is True
    when eligible ones were left only because someone else held them.

    Eligibility is checked again here because the candidates were read without a lock. PostgreSQL: one
    statement, ordered by the position in the id array, FOR UPDATE OF the item SKIP LOCKED, LIMIT 1.
    SQLite: the write transaction already holds the database, so the eligible rows are read and the first
    in order taken. Written as SQL for the reason `candidate_rows` is: it runs on every "next"."""
    assignment, label, entry, example = (m._meta.db_table for m in (Assignment, HumanLabel, VersionEntry, Example))
    ids_sql = ids_in(ids)
    blocking = ", ".join(["%s"] * len(BLOCKING))
    labelled = (
        f" AND NOT EXISTS (SELECT 1 FROM {label} hl WHERE hl.annotator_id = %s AND hl.answer_id = qi.answer_id)"
        if queue.kind != Queue.KIND_REWORK
        else ""
    )
    where = (
        f" FROM {ITEM_JOIN} WHERE qi.id IN ({ids_sql.sql}) AND qi.queue_id = %s AND qi.status = %s AND qi.taken < %s"
        f" AND NOT EXISTS (SELECT 1 FROM {assignment} b WHERE b.item_id = qi.id AND b.annotator_id = %s"
        f" AND b.state IN ({blocking})){labelled}"
    )
    where_params = [
        *ids_sql.params,
        queue.pk,
        QueueItem.OPEN,
        queue.overlap,
        annotator.pk,
        *BLOCKING,
        *([annotator.pk] if labelled else []),
    ]
    sql = (
        f"SELECT {item_columns()},"
        f" EXISTS (SELECT 1 FROM {assignment} e WHERE e.item_id = qi.id AND e.annotator_id = %s AND e.state = %s),"
        f" (SELECT ex.canonical FROM {entry} ve JOIN {example} ex ON ex.sha256 = ve.example_id"
        f" WHERE ve.version_id = r.dataset_version_id AND ve.qid = ans.qid LIMIT 1){where}"
    )
    params = [annotator.pk, Assignment.EXPIRED, *where_params]
    if connection.vendor == "postgresql":
        sql += " ORDER BY array_position(%s::bigint[], qi.id) LIMIT 1 FOR UPDATE OF qi SKIP LOCKED"
        params.append(ids)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = {row[0]: row for row in cursor.fetchall()}
        row = next((rows[pk] for pk in ids if pk in rows), None)
        if row is None:
            if connection.vendor != "postgresql":
                return None, False
            cursor.execute(f"SELECT EXISTS (SELECT 1{where})", where_params)
            return None, bool(cursor.fetchone()[0])
    item: Any = item_from_row(row)  # carries two attributes of this read beside its fields
    item.mine_expired, item.question_record = bool(row[-2]), row[-1]
    return item, False


# The item, its answer and the answer's run read in one statement (aliases qi, ans and r), as
# select_related("answer__run") reads them: what "next" and a submit lock and hand on.
_ITEM_MODELS = (QueueItem, Answer, Run)
ITEM_JOIN = (
    f"{QueueItem._meta.db_table} qi JOIN {Answer._meta.db_table} ans ON ans.id = qi.answer_id"
    f" JOIN {Run._meta.db_table} r ON r.id = ans.run_id"
)


def item_columns() -> str:
    """The select list of ITEM_JOIN's three rows, in the order `item_from_row` reads them."""
    return ", ".join(columns_sql(m, alias) for alias, m in zip(("qi", "ans", "r"), _ITEM_MODELS, strict=True))


def item_from_row(row: Sequence[object]) -> QueueItem:
    """The QueueItem with its answer and run cached, from a row that starts with `item_columns()`."""
    widths = [len(m._meta.concrete_fields) for m in _ITEM_MODELS]
    item = row_instance(QueueItem, row[: widths[0]])
    answer = row_instance(Answer, row[widths[0] : widths[0] + widths[1]])
    run = row_instance(Run, row[widths[0] + widths[1] : sum(widths)])
    Answer.run.field.set_cached_value(answer, run)
    QueueItem.answer.field.set_cached_value(item, answer)
    return item


def claim_write(assignment: Assignment, item: QueueItem) -> None:
    """Insert the new claim and count it on the item (locked by the caller), whose `taken` the caller has
    already raised. PostgreSQL: one statement (the insert in a WITH, the item's update beside it), a round
    trip less on every "next"; a clash with the unique constraints raises IntegrityError as the insert alone
    would. Elsewhere the two statements."""
    if connection.vendor != "postgresql":
        assignment.save(force_insert=True)
        item.save(update_fields=["taken"])
        return
    fields = [f for f in Assignment._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    values = [f.get_db_prep_save(f.pre_save(assignment, True), connection) for f in fields]
    sql = (
        f"WITH a AS (INSERT INTO {quote(Assignment._meta.db_table)} ({', '.join(quote(str(f.column)) for f in fields)})"
        f" VALUES ({', '.join(['%s'] * len(fields))}) RETURNING id)"
        f" UPDATE {quote(QueueItem._meta.db_table)} SET taken = %s WHERE id = %s RETURNING (SELECT id FROM a)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, item.taken, item.pk])
        assignment.pk = cursor.fetchone()[0]
    assignment._state.adding, assignment._state.db = False, connection.alias
