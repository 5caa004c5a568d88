"""A labelling queue's agreement counts and label seconds: as kept (QueuePairCount, QueueLabelSeconds, a few
hundred rows a queue) and as the labels give them live (the reference the kept rows must equal, and what a
queue not kept is read from).

Live, the pairs are every pair of submitted labels on one complete item, the first label in (submit time,
then annotator id) as `a` and the later as `b`: the pairs `combinations` makes of the item's labels in
submit order. The seconds are each submitted assignment's label's active seconds (none without a label).
"""

from collections import defaultdict
from itertools import combinations

from django.db import connection

from annotation.models import Assignment, HumanLabel, QueueItem, QueueLabelSeconds, QueuePairCount
from evalapp.keyset import ids_in

# (queue id, stratum, first annotator id, second annotator id, first verdict, second verdict) -> pairs
PairKey = tuple[int, str, int, int, str, str]
# (queue id, annotator id, timed, seconds) -> labels; untimed labels carry 0 seconds
SecondsKey = tuple[int, int, bool, float]


def _tables() -> tuple[str, str, str]:
    return Assignment._meta.db_table, QueueItem._meta.db_table, HumanLabel._meta.db_table


def _items_where(*, queue_id: int | None, answer_ids: list[int] | None) -> tuple[str, tuple]:
    """The items counted: one queue's, the items on some answers (every queue's), or every item."""
    if queue_id is not None:
        return " AND qi.queue_id = %s", (queue_id,)
    if answer_ids is not None:
        inner = ids_in(answer_ids)
        return f" AND qi.answer_id IN ({inner.sql})", tuple(inner.params)
    return "", ()


def pairs_sql(select: str, where: str = "", group: str = "") -> str:
    """Every pair of labels on a complete item, `where` narrowing the items (`qi`), as one statement; its
    parameters are pairs_params' followed by `where`'s."""
    assignment, item, label = _tables()
    return (
        f"SELECT {select} FROM {assignment} a1"
        f" JOIN {assignment} a2 ON a2.item_id = a1.item_id AND a2.state = %s AND (a1.submitted_at < a2.submitted_at"
        " OR (a1.submitted_at = a2.submitted_at AND a1.annotator_id < a2.annotator_id))"
        f" JOIN {item} qi ON qi.id = a1.item_id"
        f" JOIN {label} l1 ON l1.answer_id = qi.answer_id AND l1.annotator_id = a1.annotator_id"
        f" JOIN {label} l2 ON l2.answer_id = qi.answer_id AND l2.annotator_id = a2.annotator_id"
        f" WHERE a1.state = %s AND qi.status <> %s{where}{group}"
    )


def pairs_params() -> tuple:
    return (Assignment.DONE, Assignment.DONE, QueueItem.OPEN)


PAIR_COLUMNS = "qi.queue_id, qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict"


def live_pairs(*, queue_id: int | None = None, answer_ids: list[int] | None = None) -> dict[PairKey, int]:
    """The pair counts the labels give now, of one queue, of every queue's items on `answer_ids`, or of
    every queue: one grouped query."""
    where, params = _items_where(queue_id=queue_id, answer_ids=answer_ids)
    sql = pairs_sql(f"{PAIR_COLUMNS}, COUNT(*)", where, f" GROUP BY {PAIR_COLUMNS}")
    with connection.cursor() as cursor:
        cursor.execute(sql, (*pairs_params(), *params))
        return {tuple(row[:6]): int(row[6]) for row in cursor.fetchall()}


def _seconds_key(queue_id: int, annotator_id: int, seconds) -> SecondsKey:
    return (queue_id, annotator_id, seconds is not None, float(seconds or 0.0))


def live_seconds(*, queue_id: int | None = None, answer_ids: list[int] | None = None) -> dict[SecondsKey, int]:
    """The label seconds the labels give now (each submitted assignment's label's active seconds, counted by
    queue, annotator and value), of the same items as live_pairs: one grouped query."""
    assignment, item, label = _tables()
    where, params = _items_where(queue_id=queue_id, answer_ids=answer_ids)
    sql = (
        f"SELECT a.queue_id, a.annotator_id, l.active_seconds, COUNT(*) FROM {assignment} a"
        f" JOIN {item} qi ON qi.id = a.item_id"
        f" LEFT JOIN {label} l ON l.answer_id = qi.answer_id AND l.annotator_id = a.annotator_id"
        f" WHERE a.state = %s{where} GROUP BY a.queue_id, a.annotator_id, l.active_seconds"
    )
    out: dict[SecondsKey, int] = defaultdict(int)
    with connection.cursor() as cursor:
        cursor.execute(sql, (Assignment.DONE, *params))
        for queue_id_, annotator_id, seconds, n in cursor.fetchall():
            out[_seconds_key(queue_id_, annotator_id, seconds)] += int(n)
    return dict(out)


def live_counts(answer_ids: list[int]) -> tuple[dict[PairKey, int], dict[SecondsKey, int]]:
    """live_pairs and live_seconds of every queue's items on `answer_ids` (a submit's answer), from one read
    of their submitted assignments with their labels, paired here as pairs_sql pairs them. A submit reads
    them before and after its write with the answer's row locked; the five-way join of pairs_sql costs
    PostgreSQL several milliseconds to plan each time, where this three-way one is planned in a fraction."""
    assignment, item, label = _tables()
    where, params = _items_where(queue_id=None, answer_ids=answer_ids)
    sql = (
        "SELECT qi.queue_id, qi.stratum, qi.status, a.item_id, a.annotator_id, a.submitted_at, l.id, l.verdict,"
        f" l.active_seconds FROM {assignment} a JOIN {item} qi ON qi.id = a.item_id"
        f" LEFT JOIN {label} l ON l.answer_id = qi.answer_id AND l.annotator_id = a.annotator_id"
        f" WHERE a.state = %s{where}"
    )
    seconds: dict[SecondsKey, int] = defaultdict(int)
    labelled: dict[tuple[int, str, int], list[tuple]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(sql, (Assignment.DONE, *params))
        for queue_id, stratum, status, item_id, annotator_id, submitted_at, label_id, verdict, secs in cursor:
            seconds[_seconds_key(queue_id, annotator_id, secs)] += 1
            # pairs_sql pairs labelled assignments on a complete item in (submitted_at, annotator) order;
            # a submit time it cannot compare (none) pairs with nothing there either.
            if label_id is not None and status != QueueItem.OPEN and submitted_at is not None:
                labelled[(queue_id, stratum, item_id)].append((submitted_at, annotator_id, verdict))
    pairs: dict[PairKey, int] = defaultdict(int)
    for (queue_id, stratum, _), labels in labelled.items():
        for (_, a, va), (_, b, vb) in combinations(sorted(labels), 2):
            pairs[(queue_id, stratum, a, b, va, vb)] += 1
    return dict(pairs), dict(seconds)


def kept_pairs(queue_id: int) -> dict[PairKey, int]:
    """The queue's kept pair counts (rows that count nothing left out)."""
    return {
        (queue_id, s, a, b, va, vb): n
        for s, a, b, va, vb, n in QueuePairCount.objects.filter(queue_id=queue_id)
        .exclude(n=0)
        .values_list("stratum", "annotator_a_id", "annotator_b_id", "verdict_a", "verdict_b", "n")
    }


def kept_seconds(queue_id: int) -> dict[SecondsKey, int]:
    """The queue's kept label seconds (rows that count nothing left out)."""
    return {
        (queue_id, a, timed, seconds): n
        for a, timed, seconds, n in QueueLabelSeconds.objects.filter(queue_id=queue_id)
        .exclude(n=0)
        .values_list("annotator_id", "timed", "seconds", "n")
    }
