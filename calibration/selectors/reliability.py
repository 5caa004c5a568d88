"""Gate figures about how far a judge's verdicts can be trusted beyond agreeing with people: whether it
favours long answers (length bias with an interval)."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Case, Value, When
from django.db.models.functions import Length

from calibration.models import Measurement, Verdict
from calibration.selectors.summary import measurement_figure
from evalstats.length_bias import length_pass_gap

# Draws of the length-bias bootstrap, as many as the gate's other intervals.
LENGTH_BIAS_ITERS = 2000


def length_bias_gap(measurement: Measurement) -> dict:
    """The gate's `length_bias`: the judge's pass rate among human-correct answers, longest quarter minus
    shortest, in points, with a bootstrap interval seeded by the sample's seed. Worked out once per
    measurement (its verdicts and the answers' texts never change)."""
    return measurement_figure(measurement, "length_bias_gap", lambda: _length_bias_gap(measurement))


def _length_bias_gap(measurement: Measurement) -> dict:
    passes = Case(When(verdict="correct", then=Value(1)), default=Value(0))
    rows = list(
        Verdict.objects.filter(run_id=measurement.run_id, human_verdict="correct")
        .order_by("item_id")
        .values_list(Length("item__answer__answer"), passes)
    )
    got = length_pass_gap(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [True] * len(rows),
        iters=LENGTH_BIAS_ITERS,
        seed=measurement.run.sample.seed,
        warn_points=settings.JUDGE_LENGTH_BIAS_WARN_POINTS,
    )
    return {
        "statistic": got.statistic,
        "ci95": got.ci95,
        "warning": got.warning,
        "method": got.method,
        "n": got.n,
        "n_short": got.n_short,
        "n_long": got.n_long,
        "reason": got.reason,
    }
