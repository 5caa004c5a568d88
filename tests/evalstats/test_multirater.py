"""Fleiss' kappa and Krippendorff's alpha against statsmodels and the `krippendorff` package, with
missing ratings; the bootstrap over items; the warnings and refusals."""

import json
import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from evalstats.multirater import (
    METRICS,
    bootstrap_alpha_ci,
    coincidences,
    fleiss_kappa,
    krippendorff_alpha,
    multi_rater_agreement,
)

NAN = np.nan

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 3 coders x 15 units example
# (also the `krippendorff` package's doctest): alpha nominal 0.691, interval 0.811.
WIKI = [
    [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
    [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
]

# Four coders x 12 units with gaps (Hayes & Krippendorff 2007, page 8): ordinal 0.815.
HAYES = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def alpha_of(result):
    """The alpha of a result that has one (a None here is a failure of the test)."""
    assert result.krippendorff_alpha is not None
    return result.krippendorff_alpha


def ci_of(result):
    assert result.alpha_ci95 is not None
    return result.alpha_ci95


def long_format(reliability_data):
    """(items, raters, ratings) from a raters x items matrix with NaN for a missing rating."""
    items, raters, ratings = [], [], []
    for i in range(len(reliability_data[0])):
        for r, row in enumerate(reliability_data):
            v = row[i]
            if not (isinstance(v, float) and math.isnan(v)):
                items.append(f"u{i}")
                raters.append(f"coder{r}")
                ratings.append(int(v) if isinstance(v, float) else v)
    return items, raters, ratings


def random_reliability(seed, raters, items, labels, missing):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(labels), size=items)
    data = np.empty((raters, items))
    for r in range(raters):
        noisy = np.where(rng.random(items) < 0.3, rng.integers(0, len(labels), size=items), truth)
        data[r] = np.array(labels, dtype=float)[noisy]
    data[rng.random((raters, items)) < missing] = NAN
    return data


TABLES = [
    ("wiki", WIKI),
    ("hayes", HAYES),
    ("3x40 no gaps", random_reliability(1, 3, 40, [1, 2, 3], 0.0)),
    ("5x60 gaps", random_reliability(2, 5, 60, [1, 2, 3, 4, 5], 0.3)),
    ("10x25 gaps", random_reliability(3, 10, 25, [0, 1], 0.5)),
    ("4x80 uneven scale", random_reliability(4, 4, 80, [1, 2, 5, 10], 0.2)),
]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("name", "data"), TABLES, ids=[t[0] for t in TABLES])
def test_alpha_equals_the_krippendorff_package(name, data, metric):
    items, raters, ratings = long_format(data)
    ours = multi_rater_agreement(items, raters, ratings, metric=metric, iters=50)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=metric)
    assert ours.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
    assert ours.metric == metric


def test_published_values():
    wiki = long_format(WIKI)
    assert round(alpha_of(multi_rater_agreement(*wiki, metric="nominal", iters=10)), 6) == 0.691358
    assert round(alpha_of(multi_rater_agreement(*wiki, metric="interval", iters=10)), 6) == 0.810845
    hayes = long_format(HAYES)
    assert round(alpha_of(multi_rater_agreement(*hayes, metric="ordinal", iters=10)), 3) == 0.815


def test_string_labels_take_the_given_order_for_ordinal_alpha():
    names = ["very low", "low", "mid", "high", "very high"]
    data = [[names[int(v) - 1] if not math.isnan(v) else NAN for v in row] for row in HAYES]
    items, raters, ratings = long_format(data)
    ours = multi_rater_agreement(items, raters, ratings, labels=names, metric="ordinal", iters=10)
    # As the package's own doctest writes it: a string array where NaN becomes "nan", outside the domain.
    as_strings = data
    expected = krippendorff.alpha(reliability_data=as_strings, level_of_measurement="ordinal", value_domain=names)
    assert ours.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
    assert ours.labels == tuple(names)
    with pytest.raises(ValueError) as exc:
        multi_rater_agreement(items, raters, ratings, metric="ordinal")
    assert str(exc.value).startswith(
        "ordinal alpha needs the order of the labels, and string labels (high, low, mid, very high, very low) have none"
    )
    # Nominal alpha needs no order.
    nominal = multi_rater_agreement(items, raters, ratings, metric="nominal", iters=10)
    assert nominal.krippendorff_alpha == pytest.approx(
        krippendorff.alpha(reliability_data=as_strings, level_of_measurement="nominal"), abs=1e-12
    )


FLEISS_TABLES = [
    # Fleiss (1971): 10 subjects, 14 raters, 5 categories (the Wikipedia example; kappa 0.210).
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ],
    np.random.default_rng(1).multinomial(3, [0.5, 0.3, 0.2], size=40).tolist(),
    np.random.default_rng(2).multinomial(10, [0.9, 0.1], size=25).tolist(),
    np.random.default_rng(3).multinomial(4, [0.25] * 4, size=100).tolist(),
]


@pytest.mark.parametrize("table", FLEISS_TABLES)
def test_fleiss_kappa_equals_statsmodels(table):
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss_kappa(np.array(table)), abs=1e-12)


def test_fleiss_published_value_and_through_long_format():
    table = FLEISS_TABLES[0]
    kappa = fleiss_kappa(table)
    assert kappa is not None and round(kappa, 3) == 0.210
    items, raters, ratings = [], [], []
    for i, row in enumerate(table):
        r = 0
        for label, count in enumerate(row):
            for _ in range(count):
                items.append(i)
                raters.append(f"r{r}")
                ratings.append(label + 1)
                r += 1
    ours = multi_rater_agreement(items, raters, ratings, iters=10)
    assert ours.fleiss_kappa == pytest.approx(sm_fleiss_kappa(np.array(table)), abs=1e-12)
    assert ours.raters == 14
    assert ours.n_items == 10
    assert ours.warnings == ()


def test_fleiss_with_unequal_counts_uses_each_items_own_and_says_so():
    # Item 0: 3 raters all agree (P=1); item 1: 2 raters disagree (P=0); item 2: 2 agree (P=1).
    items = [0, 0, 0, 1, 1, 2, 2]
    raters = ["a", "b", "c", "a", "b", "b", "c"]
    ratings = ["x", "x", "x", "x", "y", "y", "y"]
    ours = multi_rater_agreement(items, raters, ratings, iters=10)
    p_mean = (1 + 0 + 1) / 3
    p_exp = (4 / 7) ** 2 + (3 / 7) ** 2
    assert ours.fleiss_kappa == pytest.approx((p_mean - p_exp) / (1 - p_exp), abs=1e-15)
    assert ours.warnings == (
        "items have 2 to 3 ratings: Fleiss' kappa assumes the same number on every item and here weighs "
        "each item's agreement by its own count; Krippendorff's alpha is built for missing ratings",
    )


def test_items_with_one_rating_are_dropped_and_said():
    items, raters, ratings = long_format(WIKI)
    ours = multi_rater_agreement(items, raters, ratings, metric="nominal", iters=10)
    # u0 has one rating (coder1), u1 none at all (so it is not in the long format), 13 remain.
    assert ours.n_items == 12
    assert ours.dropped_items == 1
    assert ours.warnings[0] == (
        "1 item(s) had fewer than 2 ratings and were dropped: agreement needs two raters on an item"
    )
    assert ours.raters == 3
    assert ours.rater_names == ("coder0", "coder1", "coder2")


def test_one_observed_label_leaves_alpha_and_kappa_undefined_with_a_sentence():
    items = [0, 0, 1, 1]
    raters = ["a", "b", "a", "c"]
    ours = multi_rater_agreement(items, raters, ["ok"] * 4, iters=10)
    assert ours.krippendorff_alpha is None
    assert ours.fleiss_kappa is None
    assert ours.alpha_ci95 is None
    assert ours.warnings == (
        "only one label ('ok') was given on the items rated twice or more, so there is no disagreement to "
        "expect by chance: kappa and alpha are undefined",
    )
    json.dumps(ours.to_dict(), allow_nan=False)


def test_no_item_rated_twice():
    ours = multi_rater_agreement(["q1", "q2"], ["a", "b"], ["x", "y"], iters=10)
    assert ours.n_items == 0
    assert ours.krippendorff_alpha is None
    assert ours.fleiss_kappa is None
    assert ours.warnings == (
        "2 item(s) had fewer than 2 ratings and were dropped: agreement needs two raters on an item",
        "no item has two or more ratings; kappa and alpha are undefined",
    )


def test_a_rater_rating_an_item_twice_is_refused():
    with pytest.raises(ValueError, match="rater 'a' rates item 'q1' twice"):
        multi_rater_agreement(["q1", "q1"], ["a", "a"], ["x", "y"])


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="metric must be one of nominal, ordinal, interval, got 'ratio'"):
        multi_rater_agreement(["q1", "q1"], ["a", "b"], [1, 2], metric="ratio")


def test_to_dict_has_the_interface_keys():
    items, raters, ratings = long_format(HAYES)
    out = multi_rater_agreement(items, raters, ratings, metric="ordinal", iters=200, seed=4).to_dict()
    assert list(out)[:7] == [
        "n_items",
        "raters",
        "fleiss_kappa",
        "krippendorff_alpha",
        "alpha_ci95",
        "metric",
        "warnings",
    ]
    assert out["bootstrap"] == {"method": "items", "iters": 200, "seed": 4, "undefined_share": 0.0}
    json.dumps(out, allow_nan=False)


# --- the bootstrap over items ---------------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_bootstrap_equals_resampling_items_by_hand(metric):
    data = random_reliability(5, 4, 30, [1, 2, 3, 4], 0.25)
    items, raters, ratings = long_format(data)
    ours = multi_rater_agreement(items, raters, ratings, metric=metric, iters=300, seed=9)
    # The same draws, done the slow way: a draw of n items is multinomial over the distinct rows of
    # counts (items with equal rows are interchangeable); repeat each row as often as it was drawn.
    table = value_counts(data, [1, 2, 3, 4])
    used = table[table.sum(axis=1) >= 2]
    patterns, times = np.unique(used, axis=0, return_counts=True)
    rng = np.random.default_rng(9)
    n = used.shape[0]
    weights = rng.multinomial(n, times / n, size=300)
    alphas = []
    for w in weights:
        resampled = np.repeat(patterns, w, axis=0)
        alphas.append(
            krippendorff.alpha(value_counts=resampled, value_domain=[1, 2, 3, 4], level_of_measurement=metric)
        )
    lo, hi = np.percentile(alphas, [2.5, 97.5])
    ci = ci_of(ours)
    assert ci[0] == pytest.approx(lo, abs=1e-12)
    assert ci[1] == pytest.approx(hi, abs=1e-12)
    assert ci[0] < alpha_of(ours) < ci[1]


def test_drawing_row_patterns_is_drawing_items():
    """Resampling items one by one and resampling their distinct rows give the same interval (up to noise)."""
    data = random_reliability(11, 3, 80, [1, 2, 3], 0.2)
    table = value_counts(data, [1, 2, 3])
    used = table[table.sum(axis=1) >= 2]
    ci, _ = bootstrap_alpha_ci(used, iters=4000, seed=0)
    rng = np.random.default_rng(1)
    by_item = [
        krippendorff.alpha(value_counts=used[rng.integers(0, len(used), len(used))], level_of_measurement="nominal")
        for _ in range(4000)
    ]
    lo, hi = np.percentile(by_item, [2.5, 97.5])
    assert ci is not None
    assert abs(ci[0] - lo) < 0.03 and abs(ci[1] - hi) < 0.03


def test_bootstrap_is_seeded():
    data = random_reliability(6, 3, 40, [0, 1], 0.1)
    table = value_counts(data, [0, 1])
    assert bootstrap_alpha_ci(table, iters=500, seed=1) == bootstrap_alpha_ci(table, iters=500, seed=1)
    assert bootstrap_alpha_ci(table, iters=500, seed=1) != bootstrap_alpha_ci(table, iters=500, seed=2)


def test_pooling_pairs_gives_a_narrower_interval_than_resampling_items():
    """Why the item bootstrap: treating the 10 pairs of 5 raters on an item as 10 items shrinks the interval."""
    from evalstats.bootstrap import bootstrap_kappa_ci
    from evalstats.kappa import confusion_matrix

    data = random_reliability(8, 5, 60, [0, 1], 0.0)
    items, raters, ratings = long_format(data)
    ours = multi_rater_agreement(items, raters, ratings, iters=2000, seed=0)
    a, b = [], []
    for u in range(data.shape[1]):
        col = data[:, u]
        for i in range(5):
            for j in range(i + 1, 5):
                a.append(col[i])
                b.append(col[j])
    _, counts = confusion_matrix(np.array(a), np.array(b))
    pooled = bootstrap_kappa_ci(counts, iters=2000, seed=0)
    assert pooled.hi is not None and pooled.lo is not None
    assert (pooled.hi - pooled.lo) < 0.8 * (ci_of(ours)[1] - ci_of(ours)[0])


def value_counts(data, domain):
    data = np.asarray(data, dtype=float)
    return (data.T[:, :, None] == np.array(domain, dtype=float)[None, None, :]).sum(axis=1)


def test_coincidence_matrix_of_one_item():
    # Three raters: x, x, y. Ordered pairs from different raters, each weighted 1/(3-1).
    assert coincidences([[2, 1]]).tolist() == [[1.0, 1.0], [1.0, 0.0]]


# --- random tables with gaps ----------------------------------------------------------------------


@st.composite
def reliability(draw):
    raters = draw(st.integers(2, 6))
    items = draw(st.integers(1, 25))
    k = draw(st.integers(2, 5))
    domain = sorted(draw(st.lists(st.integers(-5, 20), min_size=k, max_size=k, unique=True)))
    cells = draw(
        st.lists(st.one_of(st.none(), st.sampled_from(domain)), min_size=raters * items, max_size=raters * items)
    )
    data = np.array([NAN if c is None else c for c in cells], dtype=float).reshape(raters, items)
    return data, domain


@settings(max_examples=150, deadline=None)
@given(reliability(), st.sampled_from(METRICS))
def test_alpha_equals_the_package_on_random_tables_with_gaps(case, metric):
    data, domain = case
    table = value_counts(data, domain)
    table = table[table.sum(axis=1) >= 2]
    ours = krippendorff_alpha(table, metric=metric, values=domain) if table.size else None
    if table.size == 0 or (table.sum(axis=0) > 0).sum() < 2:
        assert ours is None
        return
    expected = krippendorff.alpha(value_counts=table, value_domain=domain, level_of_measurement=metric)
    assert ours == pytest.approx(expected, abs=1e-12)
