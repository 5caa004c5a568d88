"""The coverage rule: when a kappa interval cannot be trusted to cover 95% of the time."""

import pytest

from evalstats.coverage import MIN_MINORITY, MIN_N, coverage_warning, prevalence, undefined_replicates_warning

LABELS = ["correct", "incorrect"]


def test_the_rule_is_the_measured_one():
    assert (MIN_N, MIN_MINORITY) == (30, 10)


def test_n_30_at_prevalence_0_9_warns_and_says_what_to_do():
    # 27 of 30 both say correct: 90% on one label, 3 items off it.
    warning = coverage_warning([[26, 1], [1, 2]], LABELS)
    assert warning == (
        "only about 3 item(s) off the most common label 'correct', which has 90% of the labels (at least 10 are "
        "needed): at this size and prevalence a 95% interval for kappa covers the true value far less often than "
        "95% (72% at n = 30 with 90% on one label), so kappa and its interval may mislead. Label more items, "
        "above all from the rarer label, until there are at least 30 items and 10 off the most common "
        "label, and gate on the interval's lower bound (policy lower_bound) rather than on kappa itself."
    )


def test_small_n_warns_even_at_balanced_prevalence():
    warning = coverage_warning([[5, 1], [1, 5]], LABELS)
    assert warning is not None
    assert warning.startswith(
        "only 12 item(s) (at least 30 are needed) and only about 6 item(s) off the most common label 'correct'"
    )


@pytest.mark.parametrize(
    "table",
    [
        [[12, 3], [3, 12]],  # n 30, balanced
        [[85, 5], [5, 5]],  # n 100 at 0.9: 10 off the top label
        [[185, 5], [5, 5]],  # n 200 at 0.95
    ],
)
def test_no_warning_where_coverage_was_near_nominal(table):
    assert coverage_warning(table, LABELS) is None


def test_prevalence_pools_both_raters():
    assert prevalence([[60, 20], [0, 20]], LABELS) == ("correct", 0.7)
    assert prevalence([[0, 0], [0, 0]], LABELS) is None
    assert coverage_warning([[0, 0], [0, 0]], LABELS) is None


def test_undefined_replicates_warn_above_two_percent_only():
    assert undefined_replicates_warning(0.02, 10_000) is None
    assert undefined_replicates_warning(None, 10_000) is None
    assert undefined_replicates_warning(0.1298, 10_000) == (
        "1298 of 10000 bootstrap replicates (13.0%) put every item on one label, where kappa is undefined; "
        "they were left out, so the bootstrap interval describes only the resamples that had both labels "
        "and is too optimistic. Label more items from the rarer label."
    )
