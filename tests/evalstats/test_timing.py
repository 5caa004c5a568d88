"""Time per item: median, p90, total, what is left out, the projection and its words."""

import statistics

import pytest

from evalstats.timing import TimeSummary, duration_words, projection, time_summary


def test_an_even_count_takes_the_mean_of_the_middle_two():
    s = time_summary([40.0, 10.0, 30.0, 20.0])
    # p90 by linear interpolation: position 0.9 * 3 = 2.7 between 30 and 40
    assert s == TimeSummary(items=4, n=4, untimed=0, zero=0, short=0, median=25.0, p90=37.0, total=100.0)
    assert s.excluded == 0


def test_no_figure_and_zero_seconds_are_left_out_and_counted():
    s = time_summary([None, 0, 5, 100, 20])
    # kept 5, 20, 100: p90 at position 1.8, 20 + 0.8 * 80
    assert s == TimeSummary(items=5, n=3, untimed=1, zero=1, short=0, median=20.0, p90=84.0, total=125.0)
    assert s.excluded == 2


def test_min_seconds_leaves_out_the_short_entries_too():
    s = time_summary([None, 0, 5, 100, 20], min_seconds=10)
    assert s == TimeSummary(items=5, n=2, untimed=1, zero=1, short=1, median=60.0, p90=92.0, total=120.0)


def test_nobody_timed_gives_no_figure_rather_than_a_zero():
    assert time_summary([None, None, 0]) == TimeSummary(3, 0, 2, 1, 0, None, None, 0.0)
    assert time_summary([]) == TimeSummary(0, 0, 0, 0, 0, None, None, 0.0)


def test_one_entry_is_its_own_median_and_p90():
    assert time_summary([42.5]) == TimeSummary(1, 1, 0, 0, 0, 42.5, 42.5, 42.5)


@pytest.mark.parametrize(
    "values",
    [[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], [12.5, 700.0, 33.0], [float(i * i) for i in range(1, 31)]],
)
def test_p90_is_the_inclusive_quantile_of_the_standard_library(values):
    s = time_summary(values)
    assert s.median == statistics.median(values)
    assert s.p90 == pytest.approx(statistics.quantiles(values, n=10, method="inclusive")[8], abs=1e-9)


def test_an_outlier_moves_the_median_by_one_place_only():
    assert time_summary([30, 40, 50, 36_000]).median == 45.0


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_impossible_seconds_are_refused(bad):
    with pytest.raises(ValueError, match="active seconds"):
        time_summary([10.0, bad])
    with pytest.raises(ValueError, match="min_seconds"):
        time_summary([10.0], min_seconds=bad)


def test_projection_is_left_times_the_median():
    assert projection(120, 65.0) == 7800.0
    assert projection(0, None) == 0.0  # nothing left needs no timing
    assert projection(3, None) is None
    with pytest.raises(ValueError):
        projection(-1, 10.0)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "0 s"),
        (40.4, "40 s"),
        (59.4, "59 s"),
        (59.6, "1 min"),
        (90, "2 min"),  # half up, not to even
        (150, "3 min"),
        (725, "12 min"),
        (3569, "59 min"),
        (3570, "1 h"),
        (7800, "2 h 10 min"),
        (90_000, "25 h"),
    ],
)
def test_duration_words(seconds, words):
    assert duration_words(seconds) == words
