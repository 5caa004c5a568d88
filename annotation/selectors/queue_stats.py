"""A labelling queue's agreement figures: raw agreement and kappa between its annotators, per pair and
per stratum, and with three or more labels an item Fleiss' kappa and Krippendorff's alpha, from the
labels the viewer's scope may read."""

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from annotation.models import (
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
)
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.queues import queue_progress
from evalstats.agreement import agreement
from evalstats.multirater import multi_rater_agreement
from evalstats.report import agreement_report

# From this overlap on, pooling every pair of labels on an item as an item of its own overstates precision.
MULTI_RATER_OVERLAP = 3


def _label_rows(queue: Queue, scope: BlindScope) -> dict[int, list[tuple[str, str]]]:
    """item id -> [(username, verdict)] in submit order, for complete items whose answer is not in the
    viewer's blind scope."""
    done = (
        Assignment.objects.filter(queue=queue, state=Assignment.DONE)
        .exclude(item__status=QueueItem.OPEN)
        .exclude(item__answer_id__in=scope.answer_ids_query())
        .values_list("item_id", "item__answer_id", "annotator_id", "annotator__username", "submitted_at")
    )
    by_item = defaultdict(list)
    answer_ids = set()
    for item_id, answer_id, annotator_id, username, at in done:
        by_item[item_id].append((at, annotator_id, username, answer_id))
        answer_ids.add(answer_id)
    verdicts = {
        (a, u): v
        for a, u, v in HumanLabel.objects.filter(answer_id__in=answer_ids).values_list(
            "answer_id", "annotator_id", "verdict"
        )
    }
    out = {}
    for item_id, rows in by_item.items():
        rows.sort(key=lambda r: (r[0], r[1]))
        out[item_id] = [
            (username, verdicts[(answer_id, uid)])
            for _at, uid, username, answer_id in rows
            if (answer_id, uid) in verdicts
        ]
    return out


def queue_reviews(queue: Queue, scope: BlindScope = OPERATOR) -> dict:
    """Flags and skips of the queue's items, for its adjudicators and engineers: who, when, why; no verdict.

    An item whose answer is in the viewer's blind scope (open in a queue whose pool holds them) is left
    out, so one annotator never reads another's flag or skip on an item they may still label."""
    rows = (
        Assignment.objects.filter(queue=queue)
        .exclude(flagged_at=None, skipped_at=None)
        .exclude(item__answer_id__in=scope.answer_ids_query())
        .select_related("item__answer", "annotator")
        .order_by("item__position", "annotator__username")
    )
    flags, skips = [], []
    for row in rows:
        base = {
            "item_id": row.item.key,
            "qid": row.item.answer.qid,
            "stratum": row.item.stratum,
            "status": row.item.status,
            "annotator": row.annotator.username,
        }
        if row.flagged_at is not None:
            flags.append({**base, "reason": row.flag_reason, "at": row.flagged_at.isoformat()})
        if row.skipped_at is not None:
            skips.append({**base, "reason": row.skip_reason, "at": row.skipped_at.isoformat()})
    return {"flags": flags, "skips": skips}


def _blind_clause(scope: BlindScope, column: str) -> tuple[str, tuple]:
    """` AND column NOT IN (the viewer's blind answers)` as SQL, or nothing for a scope blind to nothing."""
    if not scope.blind:
        return "", ()
    sql, params = scope.answer_ids_query().query.sql_with_params()
    return f" AND {column} NOT IN ({sql})", tuple(params)


def _pairs_sql(queue: Queue, scope: BlindScope, select: str, group: str = "") -> tuple[str, tuple]:
    """Every pair of submitted labels on one complete item of the queue, the first label in (submit time,
    then annotator id) as `a1`/`l1` and the later as `a2`/`l2`: the pairs `combinations` makes of the
    item's labels in submit order, joined and filtered by the database."""
    assignment, item, label = (m._meta.db_table for m in (Assignment, QueueItem, HumanLabel))
    blind, params = _blind_clause(scope, "qi.answer_id")
    sql = (
        f"SELECT {select} FROM {assignment} a1"
        f" JOIN {assignment} a2 ON a2.item_id = a1.item_id AND a2.state = %s AND (a1.submitted_at < a2.submitted_at"
        " OR (a1.submitted_at = a2.submitted_at AND a1.annotator_id < a2.annotator_id))"
        f" JOIN {item} qi ON qi.id = a1.item_id"
        f" JOIN {label} l1 ON l1.answer_id = qi.answer_id AND l1.annotator_id = a1.annotator_id"
        f" JOIN {label} l2 ON l2.answer_id = qi.answer_id AND l2.annotator_id = a2.annotator_id"
        f" WHERE a1.queue_id = %s AND a1.state = %s AND qi.status <> %s{blind}{group}"
    )
    return sql, (Assignment.DONE, queue.pk, Assignment.DONE, QueueItem.OPEN, *params)


def pair_counts(queue: Queue, scope: BlindScope = OPERATOR) -> list[tuple[str, int, int, str, str, int]]:
    """(stratum, first annotator id, second annotator id, first verdict, second verdict, pairs) over the
    queue's complete items outside the viewer's blind `scope`: one grouped query, whatever the size."""
    sql, params = _pairs_sql(
        queue,
        scope,
        "qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict, COUNT(*)",
        " GROUP BY qi.stratum, a1.annotator_id, a2.annotator_id, l1.verdict, l2.verdict",
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]


_DISAGREEMENT_ROW = ("pk", "key", "answer_id", "answer__qid", "stratum", "status", "answer__final_verdict")


def queue_disagreement_items(queue: Queue, scope: BlindScope = OPERATOR) -> QuerySet:
    """The queue's complete items whose labels disagree (outside the viewer's blind `scope`), as value
    rows in item order, for a caller to count and page; `disagreement_details` fills in the labels.
    Labels disagree exactly when their smallest and largest verdict differ: one grouped scan of the
    submitted labels, no pairing."""
    assignment, item, label = (m._meta.db_table for m in (Assignment, QueueItem, HumanLabel))
    blind, params = _blind_clause(scope, "qi.answer_id")
    sql = (
        f"SELECT a.item_id FROM {assignment} a JOIN {item} qi ON qi.id = a.item_id"
        f" JOIN {label} l ON l.answer_id = qi.answer_id AND l.annotator_id = a.annotator_id"
        f" WHERE a.queue_id = %s AND a.state = %s AND qi.status <> %s{blind}"
        " GROUP BY a.item_id HAVING MIN(l.verdict) <> MAX(l.verdict)"
    )
    return (
        QueueItem.objects.filter(pk__in=RawSQL(sql, (queue.pk, Assignment.DONE, QueueItem.OPEN, *params)))
        .order_by("pk")
        .values(*_DISAGREEMENT_ROW)
    )


def queue_disagreement_rows(item_ids: Iterable[int]) -> list[dict]:
    """The value rows of `queue_disagreement_items` for these item ids (a page of them), in item order."""
    return list(QueueItem.objects.filter(pk__in=list(item_ids)).order_by("pk").values(*_DISAGREEMENT_ROW))


def disagreement_details(items: Iterable[dict]) -> list[dict]:
    """Rows of `queue_disagreement_items` as the stats object lists them: each annotator's label in
    submit order, and the final verdict. Two queries for any number of items."""
    items = list(items)
    if not items:
        return []
    labels: dict[int, list[tuple]] = defaultdict(list)
    ids = [i["pk"] for i in items]
    answers = {i["pk"]: i["answer_id"] for i in items}
    verdicts = {
        (a, u): v
        for a, u, v in HumanLabel.objects.filter(answer_id__in=set(answers.values())).values_list(
            "answer_id", "annotator_id", "verdict"
        )
    }
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


def _pairwise_report(queue: Queue, scope: BlindScope, *, iters: int, seed: int) -> dict:
    """evalstats.report's agreement object with `per_pair`, from the grouped pair counts. Every figure
    in it is a function of the confusion counts (overall, per stratum, per pair), so label columns laid
    out from the counts give the numbers the per-item columns give."""
    counts = pair_counts(queue, scope)
    users = dict(
        get_user_model()
        .objects.filter(pk__in={u for _s, ua, ub, *_ in counts for u in (ua, ub)})
        .values_list("pk", "username")
    )
    a, b, strata = [], [], []
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for stratum, uid_a, uid_b, va, vb, n in sorted(counts, key=lambda r: (r[0] or "", r[1], r[2], r[3], r[4])):
        ua, ub = users[uid_a], users[uid_b]
        a.extend([va] * n)
        b.extend([vb] * n)
        strata.extend([stratum or "(none)"] * n)
        key = tuple(sorted((ua, ub)))
        pairs[key].extend([(va, vb) if key[0] == ua else (vb, va)] * n)
    report = (
        agreement_report(range(len(a)), a, b, strata, iters=iters, seed=seed)
        if a
        else agreement([], []).to_dict() | {"bootstrap_ci95": None}
    )
    report["per_pair"] = {
        f"{ua}/{ub}": {
            k: v
            for k, v in agreement([x for x, _ in pl], [y for _, y in pl]).to_dict().items()
            if k in ("n", "raw_agreement", "kappa", "reason", "confusion")
        }
        for (ua, ub), pl in sorted(pairs.items())
    }
    return report


def queue_stats(
    queue: Queue,
    *,
    iters: int = 2000,
    seed: int = 0,
    scope: BlindScope = OPERATOR,
    with_disagreements: bool = True,
) -> dict:
    """Progress and human-human agreement over the complete items.

    `agreement` is evalstats.report's object (a = first label in, b = second; with overlap
    above 2, every pair of labels on an item counts once) with `per_stratum`, plus `per_pair` (each
    annotator pair on the items both labelled, a = the name that sorts first), `disagreements` (every
    disagreeing item, unless `with_disagreements` is false: a page lists them a page at a time from
    `queue_disagreement_items`) and `disagreements_count` (None without the list).
    Items whose answer is in the viewer's blind `scope` are left out of the agreement and the list
    (`blind_excluded` counts them); progress counts stay whole, being counts of labels, not verdicts.
    `flags` and `skips` are queue_reviews'.
    With overlap 3 or more, `multi_rater` holds Fleiss' kappa and Krippendorff's alpha (nominal) over the
    same complete items, its interval a bootstrap over items (pairs on one item are not independent);
    else it is None.

    The pairs are counted by the database (`pair_counts`), so the cost does not grow with the items
    beyond the database's own scan; only the multi-rater figures read every label.
    """
    report = _pairwise_report(queue, scope, iters=iters, seed=seed)
    found = queue_disagreement_items(queue, scope)
    report["disagreements"] = disagreement_details(found) if with_disagreements else []
    # A page that lists them a page at a time counts them with its paginator.
    report["disagreements_count"] = len(report["disagreements"]) if with_disagreements else None
    hidden = (
        QueueItem.objects.filter(queue=queue, answer_id__in=scope.answer_ids_query())
        .exclude(status=QueueItem.OPEN)
        .count()
        if scope.blind
        else 0
    )
    multi = None
    if queue.overlap >= MULTI_RATER_OVERLAP:
        rows = _label_rows(queue, scope)
        flat = [(item_id, u, v) for item_id in sorted(rows) for u, v in rows[item_id]]
        result = multi_rater_agreement(
            [i for i, _u, _v in flat], [u for _i, u, _v in flat], [v for _i, _u, v in flat], iters=iters, seed=seed
        ).to_dict()
        multi = {
            k: result[k]
            for k in ("n_items", "raters", "fleiss_kappa", "krippendorff_alpha", "alpha_ci95", "metric", "warnings")
        }
    return {
        "queue": queue.pk,
        "name": queue.name,
        "kind": queue.kind,
        "overlap": queue.overlap,
        "rubric_version": queue.rubric_version,
        "progress": queue_progress(queue),
        "agreement": report,
        "blind_excluded": hidden,
        **queue_reviews(queue, scope),
        "multi_rater": multi,
    }
