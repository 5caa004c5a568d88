"""Queue statistics from grouped pair counts equal the figures the per-item label rows give (each item's
labels in submit order, every pair once, as the statistics were computed before they were counted)."""

from collections import defaultdict
from itertools import combinations

import pytest

from annotation.selectors.blind import OPERATOR
from annotation.selectors.queue_stats import _label_rows, queue_stats
from evalstats.agreement import agreement
from evalstats.report import agreement_report
from tests.annotation.selectors.test_queue_stats import ANNOTATORS, label_everything


def from_rows(queue, *, iters: int, seed: int) -> dict:
    rows = _label_rows(queue, OPERATOR)
    items = {i.pk: i for i in queue.items.all()}
    ids, a, b, strata = [], [], [], []
    pairs = defaultdict(list)
    for item_id in sorted(rows):
        for (ua, va), (ub, vb) in combinations(rows[item_id], 2):
            ids.append(f"{item_id}:{ua}:{ub}")
            a.append(va)
            b.append(vb)
            strata.append(items[item_id].stratum or "(none)")
            key = tuple(sorted((ua, ub)))
            pairs[key].append((va, vb) if key[0] == ua else (vb, va))
    report = agreement_report(ids, a, b, strata, iters=iters, seed=seed)
    report["per_pair"] = {
        f"{ua}/{ub}": {
            k: v
            for k, v in agreement([x for x, _ in pl], [y for _, y in pl]).to_dict().items()
            if k in ("n", "raw_agreement", "kappa", "reason", "confusion")
        }
        for (ua, ub), pl in sorted(pairs.items())
    }
    return report


@pytest.mark.django_db
def test_counted_pairs_give_the_per_item_figures_exactly(make_queue, pool):
    queue = make_queue(9, overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    got = queue_stats(queue, iters=300, seed=4)["agreement"]
    want = from_rows(queue, iters=300, seed=4)
    listed = ("disagreements", "disagreements_count", "disagreements_by_stratum", "disagreements_next")
    assert {k: v for k, v in got.items() if k not in listed} == want
    assert got["n"] == 27
    assert got["disagreements_count"] == len(got["disagreements"]) == 4  # rows 2, 4, 6 and 9 of VERDICTS
    rows = _label_rows(queue, OPERATOR)
    by_stratum: dict[str, int] = defaultdict(int)
    for item in queue.items.all():
        if len({v for _u, v in rows[item.pk]}) > 1:
            by_stratum[item.stratum] += 1
    assert got["disagreements_by_stratum"] == dict(sorted(by_stratum.items()))
    assert sum(by_stratum.values()) == 4
    assert got["disagreements_next"] is None
