"""A labelling queue's agreement figures: raw agreement and kappa between its annotators, per pair and
per stratum, and with three or more labels an item Fleiss' kappa and Krippendorff's alpha, from the
labels the viewer's scope may read."""

from collections import defaultdict
from itertools import combinations

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


def queue_stats(queue: Queue, *, iters: int = 2000, seed: int = 0, scope: BlindScope = OPERATOR) -> dict:
    """Progress and human-human agreement over the complete items.

    `agreement` is evalstats.report's object (a = first label in, b = second; with overlap
    above 2, every pair of labels on an item counts once) with `per_stratum`, plus `per_pair` (each
    annotator pair on the items both labelled, a = the name that sorts first) and `disagreements`.
    Items whose answer is in the viewer's blind `scope` are left out of the agreement and the list
    (`blind_excluded` counts them); progress counts stay whole, being counts of labels, not verdicts.
    `flags` and `skips` are queue_reviews'.
    With overlap 3 or more, `multi_rater` holds Fleiss' kappa and Krippendorff's alpha (nominal) over the
    same complete items, its interval a bootstrap over items (pairs on one item are not independent);
    else it is None.
    """
    rows = _label_rows(queue, scope)
    items = {i.pk: i for i in QueueItem.objects.filter(pk__in=list(rows)).select_related("answer")}
    ids, a, b, strata = [], [], [], []
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    disagreements = []
    for item_id in sorted(rows):
        labels = rows[item_id]
        item = items[item_id]
        for (ua, va), (ub, vb) in combinations(labels, 2):
            ids.append(f"{item_id}:{ua}:{ub}")
            a.append(va)
            b.append(vb)
            strata.append(item.stratum or "(none)")
            key = tuple(sorted((ua, ub)))
            pairs[key].append((va, vb) if key[0] == ua else (vb, va))
        if len({v for _u, v in labels}) > 1:
            disagreements.append(
                {
                    "item_id": item.key,
                    "qid": item.answer.qid,
                    "stratum": item.stratum,
                    "status": item.status,
                    "labels": {u: v for u, v in labels},
                    "final": item.answer.final_verdict or None,
                }
            )
    report = (
        agreement_report(ids, a, b, strata, iters=iters, seed=seed)
        if ids
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
    report["disagreements"] = disagreements
    hidden = (
        QueueItem.objects.filter(queue=queue, answer_id__in=scope.answer_ids_query())
        .exclude(status=QueueItem.OPEN)
        .count()
        if scope.blind
        else 0
    )
    multi = None
    if queue.overlap >= MULTI_RATER_OVERLAP:
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
