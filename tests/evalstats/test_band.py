"""The run-to-run band and the verdict on a difference against it."""
import math

import pytest

from evalstats import (
    difference_verdict,
    run_band,
)

# --- Band -------------------------------------------------------------------------------------


def test_band_is_mean_plus_minus_two_sample_sd():
    band = run_band([70.0, 72.0, 71.0, 69.0])
    sd = math.sqrt(((-0.5) ** 2 + 1.5**2 + 0.5**2 + 1.5**2) / 3)
    assert band.mean == 70.5
    assert band.sd == pytest.approx(sd, abs=1e-12)
    assert band.lo == pytest.approx(70.5 - 2 * sd, abs=1e-12)
    assert band.hi == pytest.approx(70.5 + 2 * sd, abs=1e-12)
    assert band.width == pytest.approx(4 * sd, abs=1e-12)
    assert band.n_runs == 4


def test_band_needs_two_runs():
    with pytest.raises(ValueError, match="at least 2"):
        run_band([0.7])


@pytest.mark.parametrize(
    "diff, ci, width, status, interval, band",
    [
        (8.0, (3.4, 12.6), 5.0, "clears both bars", True, True),
        (4.0, (1.0, 7.0), 5.0, "inside the band", True, False),
        (8.0, (-1.0, 17.0), 5.0, "the set is too small to resolve it", False, True),
        (2.0, (-3.0, 7.0), 5.0, "clears neither bar", False, False),
        (-8.0, (-12.6, -3.4), 5.0, "clears both bars", True, True),
    ],
)
def test_difference_verdicts(diff, ci, width, status, interval, band):
    v = difference_verdict(diff, ci, width)
    assert (v.status, v.clears_interval, v.clears_band) == (status, interval, band)


def test_verdict_words():
    v = difference_verdict(8.0, (3.4, 12.6), 5.0)
    assert v.words == (
        "+8.0 points clears both bars: its 95% interval [3.4, 12.6] excludes zero and it "
        "exceeds the 5.0-point run-to-run band."
    )
