"""Newcombe's interval of a difference of independent proportions, against the paper's own table."""

import pytest

from evalstats.proportions import newcombe_diff_ci


def test_newcombe_1998_table_ii_examples():
    # Newcombe, Statistics in Medicine 17 (1998) 873-890, Table II, method 10.
    assert newcombe_diff_ci(56, 70, 48, 80) == (pytest.approx(0.0524, abs=5e-5), pytest.approx(0.3339, abs=5e-5))
    assert newcombe_diff_ci(9, 10, 3, 10) == (pytest.approx(0.1705, abs=5e-5), pytest.approx(0.8090, abs=5e-5))


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="at least one item"):
        newcombe_diff_ci(0, 0, 1, 2)
    with pytest.raises(ValueError, match="out of range"):
        newcombe_diff_ci(3, 2, 1, 2)
