"""evalstats.traffic on hand-worked counts."""

import pytest

from evalstats.traffic import traffic_coverage


def test_shares_add_up_with_the_unclassified():
    cov = traffic_coverage({"a": 6, "b": 2}, 2, {"a": 1, "c": 3}, {"a": 60, "b": 40}, 4)
    assert (cov.traffic_total, cov.unclassified_share) == (10, 0.2)
    rows = {r.stratum: r for r in cov.strata}
    assert [r.stratum for r in cov.strata] == ["a", "b", "c"]
    assert (rows["a"].traffic_share, rows["a"].set_share, rows["a"].budget_share) == (0.6, 0.25, 0.6)
    assert (rows["b"].expected_in_sample, rows["b"].rounds_to_none) == (pytest.approx(0.8), True)
    # c is in the set but never asked: nothing to round to none.
    assert (rows["c"].traffic_share, rows["c"].budget_share, rows["c"].rounds_to_none) == (0.0, 0.0, False)
    assert sum(r.traffic_share or 0.0 for r in cov.strata) + (cov.unclassified_share or 0.0) == pytest.approx(1.0)


def test_empty_traffic_has_no_shares():
    cov = traffic_coverage({}, 0, {}, None, 10)
    assert (cov.traffic_total, cov.unclassified_share, cov.strata) == (0, None, ())


def test_negative_n_is_refused():
    with pytest.raises(ValueError):
        traffic_coverage({}, 0, {}, None, -1)
