"""A labelling queue's label pairs and disagreements as the database counts them: the grouped pair counts
behind the agreement figures, how many complete items disagree (per stratum), and one page of them with
each annotator's label. Nothing here reads every label into Python: the cost beyond the database's own
scan does not grow with the items."""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import overload

from django.db import connection

from annotation.models import Assignment, HumanLabel, QueueItem
from annotation.selectors.blind import BlindScope
from annotation.selectors.queue_counts import kept_pairs, pairs_params, pairs_sql
from evalapp.errors import Problem, ServiceError

# (stratum, first annotator id, second annotator id, first verdict, second verdict, pairs)
PairCount = tuple[str, int, int, str, str, int]


def _tables() -> tuple[str, str, str]:
    return Assignment._meta.db_table, QueueItem._meta.db_table, HumanLabel._meta.db_table


def _blind_clause(scope: BlindScope, column: str) -> tuple[str, tuple]:
    """SQL leaving out the viewer's blind answers (`column` is the answer id), or nothing for a scope blind
    to nothing. On PostgreSQL ` AND NOT EXISTS (…)`: a hash anti-join whatever the number of blind answers,
    where NOT IN is a hashed subplan only while the set fits in work_mem and a rescan per row past it. On
    SQLite ` AND column NOT IN (…)`: the set is built once into an ephemeral index, where its NOT EXISTS
    runs the subquery (a pass over the queues) for every row."""
    if not scope.blind:
        return "", ()
    sql, params = scope.answer_ids_query().query.sql_with_params()
    if connection.vendor == "postgresql":
        return f" AND NOT EXISTS (SELECT 1 FROM ({sql}) blind WHERE blind.answer_id = {column})", tuple(params)
    return f" AND {column} NOT IN ({sql})", tuple(params)


def _pairs_sql(queue_id: int, scope: BlindScope, select: str, group: str = "") -> tuple[str, tuple]:
    """Every pair of submitted labels on one complete item of the queue outside the viewer's blind scope
    (queue_counts.pairs_sql), joined and filtered by the database."""
    blind, params = _blind_clause(scope, "qi.answer_id")
    sql = pairs_sql(select, f" AND qi.queue_id = %s{blind}", group)
    return sql, (*pairs_params(), queue_id, *params)


def pair_counts_live(queue, scope: BlindScope) -> list[PairCount]:
    """pair_counts as the labels give them now: one grouped self-join of the queue's labels."""
    sql, params = _pairs_sql(
        queue.pk,
        scope,
        "qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict, COUNT(*)",
        " GROUP BY qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict",
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]


def _blind_pairs(queue, scope: BlindScope) -> list[PairCount]:
    """The pairs on the queue's complete items whose answer is in the viewer's blind scope: what the kept
    counts hold that this viewer must not be shown (answers open in another queue of theirs)."""
    sql, params = scope.answer_ids_query().query.sql_with_params()
    query = pairs_sql(
        "qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict, COUNT(*)",
        f" AND qi.queue_id = %s AND qi.answer_id IN ({sql})",
        " GROUP BY qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict",
    )
    with connection.cursor() as cursor:
        cursor.execute(query, (*pairs_params(), queue.pk, *params))
        return [tuple(row) for row in cursor.fetchall()]


def pair_counts(queue, scope: BlindScope) -> list[PairCount]:
    """(stratum, first annotator id, second annotator id, first verdict, second verdict, pairs) over the
    queue's complete items outside the viewer's blind `scope`.

    A queue whose counts are kept reads its few hundred QueuePairCount rows; for a viewer blind to some
    answers, the pairs on the queue's items over those answers are counted live and taken off (the same
    figures the live query's exclusion gives, at the cost of those items alone). A queue not kept is
    counted live, one grouped query whatever the size."""
    if not queue.counts_kept:
        return pair_counts_live(queue, scope)
    counts: dict[tuple, int] = {key[1:]: n for key, n in kept_pairs(queue.pk).items()}
    if scope.blind:
        for stratum, a, b, va, vb, n in _blind_pairs(queue, scope):
            counts[(stratum, a, b, va, vb)] -= n
    return [(*key, n) for key, n in counts.items() if n]


def _disagreeing_sql(queue_id: int, scope: BlindScope, *, stratum: str | None, after_id: int | None):
    """The ids (with strata) of the queue's complete items whose labels disagree, outside the blind scope:
    labels disagree exactly when their smallest and largest verdict differ. Grouped by item in item id
    order, so a LIMIT stops the scan once a page is found."""
    assignment, item, label = _tables()
    blind, blind_params = _blind_clause(scope, "qi.answer_id")
    where, params = "", list[object]()
    if stratum is not None:
        where += " AND qi.stratum = %s"
        params.append(stratum)
    if after_id is not None:
        where += " AND qi.id > %s"
        params.append(after_id)
    sql = (
        f"SELECT qi.id, qi.stratum FROM {item} qi JOIN {assignment} a ON a.item_id = qi.id AND a.state = %s"
        f" JOIN {label} l ON l.answer_id = qi.answer_id AND l.annotator_id = a.annotator_id"
        f" WHERE qi.queue_id = %s AND qi.status <> %s{where}{blind}"
        # Grouped by the item's key alone (its stratum depends on it), so the groups come in id order.
        " GROUP BY qi.id HAVING MIN(l.verdict) <> MAX(l.verdict)"
    )
    return sql, (Assignment.DONE, queue_id, QueueItem.OPEN, *params, *blind_params)


def disagreement_counts(queue, scope: BlindScope, pairs: Sequence[PairCount] | None = None) -> dict[str, int]:
    """Complete items whose labels disagree, per stratum (sorted), outside the viewer's blind `scope`.

    With at most two labels an item (overlap 2 or less: a complete item takes no further label, so each
    item gives at most one pair) an item disagrees exactly when its one pair does, and the counts are read
    off the grouped `pairs` already counted, with no query. Otherwise one grouped count of the items."""
    counts: dict[str, int] = defaultdict(int)
    if pairs is not None and queue.overlap <= 2:
        for stratum, _ua, _ub, va, vb, n in pairs:
            if va != vb:
                counts[stratum] += n
        return dict(sorted(counts.items()))
    sql, params = _disagreeing_sql(queue.pk, scope, stratum=None, after_id=None)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT d.stratum, COUNT(*) FROM ({sql}) d GROUP BY d.stratum", params)
        return dict(sorted((s, int(n)) for s, n in cursor.fetchall()))


def item_id_after(queue, key: str) -> int:
    """The id of the queue's item `key`, where a page of disagreements resumes; the house error when the
    queue holds no such item."""
    found = QueueItem.objects.filter(queue=queue, key=key).values_list("pk", flat=True).first()
    if found is None:
        raise ServiceError(
            "no such item in this queue to continue after",
            [Problem(f"no item {key!r} in this queue", field="disagreements_after")],
        )
    return found


def disagreement_page(
    queue, scope: BlindScope, *, limit: int, offset: int = 0, after_id: int | None = None, stratum: str | None = None
) -> list[int]:
    """Ids of up to `limit` disagreeing items in item id order, after the item `after_id` (a cursor) or
    past the first `offset` (a page number), of one stratum when given."""
    sql, params = _disagreeing_sql(queue.pk, scope, stratum=stratum, after_id=after_id)
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY qi.id LIMIT %s OFFSET %s", (*params, limit, offset))
        return [row[0] for row in cursor.fetchall()]


def disagreement_details(item_ids: Iterable[int]) -> list[dict]:
    """The stats object's disagreement entries for these items, in item order: each annotator's label in
    submit order, and the final verdict. Three queries for a page of any size."""
    ids = sorted(set(item_ids))
    if not ids:
        return []
    items = list(
        QueueItem.objects.filter(pk__in=ids)
        .order_by("pk")
        .values("pk", "key", "answer_id", "answer__qid", "stratum", "status", "answer__final_verdict")
    )
    answers = {i["pk"]: i["answer_id"] for i in items}
    verdicts = {
        (a, u): v
        for a, u, v in HumanLabel.objects.filter(answer_id__in=set(answers.values())).values_list(
            "answer_id", "annotator_id", "verdict"
        )
    }
    labels: dict[int, list[tuple]] = defaultdict(list)
    for item_id, uid, username, at in Assignment.objects.filter(item_id__in=ids, state=Assignment.DONE).values_list(
        "item_id", "annotator_id", "annotator__username", "submitted_at"
    ):
        if (answers[item_id], uid) in verdicts:
            labels[item_id].append((at, uid, username, verdicts[(answers[item_id], uid)]))
    out = []
    for i in items:
        rows = sorted(labels[i["pk"]], key=lambda r: (r[0], r[1]))
        out.append(
            {
                "item_id": i["key"],
                "qid": i["answer__qid"],
                "stratum": i["stratum"],
                "status": i["status"],
                "labels": {u: v for _at, _uid, u, v in rows},
                "final": i["answer__final_verdict"] or None,
            }
        )
    return out


class DisagreementIds(Sequence[int]):
    """The disagreeing item ids (of one stratum, when given) as Django's Paginator reads them: the count
    known up front (`disagreement_counts`), and each slice one LIMIT/OFFSET query for that page alone."""

    def __init__(self, queue, scope: BlindScope, *, total: int, stratum: str | None = None):
        self.queue, self.scope, self.total, self.stratum = queue, scope, total, stratum

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, part: int) -> int: ...

    @overload
    def __getitem__(self, part: slice) -> list[int]: ...

    def __getitem__(self, part: int | slice) -> int | list[int]:
        if isinstance(part, int):
            found = self[part : part + 1]
            if not found:
                raise IndexError(part)
            return found[0]
        start = part.start or 0
        stop = self.total if part.stop is None else min(part.stop, self.total)
        if stop <= start:
            return []
        return disagreement_page(self.queue, self.scope, limit=stop - start, offset=start, stratum=self.stratum)
