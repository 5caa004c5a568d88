"""A labelling queue's agreement figures: raw agreement and kappa between its annotators, per pair and
per stratum, and with three or more labels an item Fleiss' kappa and Krippendorff's alpha, from the
labels the viewer's scope may read."""

from collections import defaultdict

from django.contrib.auth import get_user_model

from annotation.models import (
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
)
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.queue_criteria_stats import queue_criteria_stats
from annotation.selectors.queue_pairs import (
    PairCount,
    disagreement_counts,
    disagreement_details,
    disagreement_page,
    item_id_after,
    pair_counts,
)
from annotation.selectors.queues import queue_progress
from evalstats.counts import agreement_from_cells, agreement_report_from_counts
from evalstats.multirater import multi_rater_agreement

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


def queue_reviews(queue: Queue, scope: BlindScope = OPERATOR, *, offset: int = 0, limit: int | None = None) -> dict:
    """Flags and skips of the queue's items, for its adjudicators and engineers: who, when, why; no verdict.
    `flags_count` and `skips_count` count them all; the lists hold those from `offset` on, `limit` of each
    at most (all without a limit), in item order then annotator; `reviews_next_offset` is where the next
    page starts, None when both lists are whole.

    An item whose answer is in the viewer's blind scope (open in a queue whose pool holds them) is left
    out, so one annotator never reads another's flag or skip on an item they may still label."""
    rows = Assignment.objects.filter(queue=queue).exclude(item__answer_id__in=scope.answer_ids_query())
    out: dict = {}
    counted: dict[str, int | None] = {}
    for name, column, reason in (("flags", "flagged_at", "flag_reason"), ("skips", "skipped_at", "skip_reason")):
        found = (
            rows.filter(**{f"{column}__isnull": False})
            .order_by("item__position", "annotator__username")
            .values(
                "item__key", "item__answer__qid", "item__stratum", "item__status", "annotator__username", reason, column
            )
        )
        page = list(found[offset : offset + limit] if limit is not None else found[offset:])
        out[name] = [
            {
                "item_id": r["item__key"],
                "qid": r["item__answer__qid"],
                "stratum": r["item__stratum"],
                "status": r["item__status"],
                "annotator": r["annotator__username"],
                "reason": r[reason],
                "at": r[column].isoformat(),
            }
            for r in page
        ]
        # A page that is not full, past rows that exist, ends the list: its length gives the count.
        short = limit is None or len(page) < limit
        counted[name] = offset + len(page) if short and (page or offset == 0) else None
    if None in counted.values():
        counted = {
            name: n if n is not None else rows.filter(**{f"{column}__isnull": False}).count()
            for (name, n), column in zip(counted.items(), ("flagged_at", "skipped_at"), strict=True)
        }
    out["flags_count"], out["skips_count"] = counted["flags"], counted["skips"]
    shown = offset + max(len(out["flags"]), len(out["skips"]))
    out["reviews_next_offset"] = shown if shown < max(out["flags_count"], out["skips_count"]) else None
    return out


def _pairwise_report(queue: Queue, scope: BlindScope, counts: list[PairCount], *, iters: int, seed: int) -> dict:
    """evalstats.report's agreement object with `per_pair`, from the grouped pair counts: the cells go to
    evalstats as counts (no per-item columns), which gives exactly the figures the columns would."""
    users = dict(
        get_user_model()
        .objects.filter(pk__in={u for _s, ua, ub, *_ in counts for u in (ua, ub)})
        .values_list("pk", "username")
    )
    pairs: dict[tuple[str, str], list[tuple[str, str, int]]] = defaultdict(list)
    for _stratum, uid_a, uid_b, va, vb, n in counts:
        ua, ub = users[uid_a], users[uid_b]
        key = (ua, ub) if ua <= ub else (ub, ua)
        pairs[key].append((va, vb, n) if key[0] == ua else (vb, va, n))
    report = agreement_report_from_counts(
        [(stratum or "(none)", va, vb, n) for stratum, _ua, _ub, va, vb, n in counts], iters=iters, seed=seed
    )
    report["per_pair"] = {
        f"{ua}/{ub}": {
            k: v
            for k, v in agreement_from_cells(cells).to_dict().items()
            if k in ("n", "raw_agreement", "kappa", "reason", "confusion")
        }
        for (ua, ub), cells in sorted(pairs.items())
    }
    return report


def queue_stats(
    queue: Queue,
    *,
    iters: int = 2000,
    seed: int = 0,
    scope: BlindScope = OPERATOR,
    with_disagreements: bool = True,
    disagreements_limit: int | None = None,
    disagreements_after: str | None = None,
    reviews_offset: int = 0,
    reviews_limit: int | None = None,
) -> dict:
    """Progress and human-human agreement over the complete items.

    `agreement` is evalstats.report's object (a = first label in, b = second; with overlap
    above 2, every pair of labels on an item counts once) with `per_stratum`, plus `per_pair` (each
    annotator pair on the items both labelled, a = the name that sorts first), `disagreements_count` (every
    disagreeing item), `disagreements_by_stratum` (the same per stratum) and `disagreements`: in item order,
    every one, or `disagreements_limit` of them after the item keyed `disagreements_after`, with
    `disagreements_next` the key to continue after (None on the last page); none unless `with_disagreements`
    (a page lists them a page at a time with `queue_pairs.disagreement_page`).
    Items whose answer is in the viewer's blind `scope` are left out of the agreement and the lists
    (`blind_excluded` counts them); progress counts stay whole, being counts of labels, not verdicts.
    `flags`, `skips` and their counts are queue_reviews', from `reviews_offset`, `reviews_limit` of each.
    With overlap 3 or more, `multi_rater` holds Fleiss' kappa and Krippendorff's alpha (nominal) over the
    same complete items, its interval a bootstrap over items (pairs on one item are not independent);
    else it is None.

    The pairs are counted by the database (`pair_counts`) and handed to evalstats as counts, and only a
    page of disagreements is read, so the cost does not grow with the items beyond the database's own scan;
    only the multi-rater figures read every label. A queue that grades criteria adds `criteria`, per
    criterion its agreement, disputed and adjudicated counts (queue_criteria_stats).
    """
    counts = pair_counts(queue, scope)
    report = _pairwise_report(queue, scope, counts, iters=iters, seed=seed)
    by_stratum = disagreement_counts(queue, scope, counts)
    report["disagreements_count"] = sum(by_stratum.values())
    report["disagreements_by_stratum"] = by_stratum
    report["disagreements"], report["disagreements_next"] = [], None
    if with_disagreements:
        after = item_id_after(queue, disagreements_after) if disagreements_after else None
        if disagreements_limit is None:
            ids = disagreement_page(queue, scope, limit=report["disagreements_count"] or 1, after_id=after)
        else:
            ids = disagreement_page(queue, scope, limit=disagreements_limit + 1, after_id=after)
        more = disagreements_limit is not None and len(ids) > disagreements_limit
        report["disagreements"] = disagreement_details(ids[:disagreements_limit] if more else ids)
        report["disagreements_next"] = report["disagreements"][-1]["item_id"] if more else None
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
    out = {
        "queue": queue.pk,
        "name": queue.name,
        "kind": queue.kind,
        "overlap": queue.overlap,
        "rubric_version": queue.rubric_version,
        "progress": queue_progress(queue),
        "agreement": report,
        "blind_excluded": hidden,
        **queue_reviews(queue, scope, offset=reviews_offset, limit=reviews_limit),
        "multi_rater": multi,
    }
    if queue.criteria:
        out["criteria"] = queue_criteria_stats(queue, scope=scope)
    return out
