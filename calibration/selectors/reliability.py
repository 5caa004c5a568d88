"""Gate figures about how far a judge's verdicts can be trusted beyond agreeing with people: whether it
favours long answers (length bias with an interval), and whether it agrees with itself when asked again
(self-consistency over a calibration run's repeats)."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Case, Value, When
from django.db.models.functions import Length

from calibration.models import CalibrationRun, Measurement, Verdict
from calibration.selectors.summary import measurement_figure
from evalstats.length_bias import length_bias_warning, length_pass_gap

# Draws of the length-bias bootstrap, as many as the gate's other intervals.
LENGTH_BIAS_ITERS = 2000


def length_bias_gap(measurement: Measurement) -> dict:
    """The gate's `length_bias`: the judge's pass rate among human-correct answers, longest quarter minus
    shortest, in points, with a bootstrap interval seeded by the sample's seed, and a warning worded from
    JUDGE_LENGTH_BIAS_WARN_POINTS as it is now. The figure is kept with the measurement when it is taken
    (its verdicts and the answers' texts never change); a measurement taken before that works it out once
    and keeps it in the cache."""
    figure = measurement.length_bias
    if figure is None:
        figure = measurement_figure(measurement, "length_bias_gap", lambda: length_bias_measure(measurement.run))
    warn = settings.JUDGE_LENGTH_BIAS_WARN_POINTS
    return {**figure, "warning": length_bias_warning(figure["statistic"], figure["ci95"], warn_points=warn)}


def length_bias_measure(run: CalibrationRun) -> dict:
    """The length bias of a closed run's verdicts (their `human_verdict` written), as kept in
    `Measurement.length_bias`: everything but the warning, which depends on a setting."""
    passes = Case(When(verdict="correct", then=Value(1)), default=Value(0))
    rows = list(
        Verdict.objects.filter(run_id=run.pk, human_verdict="correct")
        .order_by("item_id")
        .values_list(Length("item__answer__answer"), passes)
    )
    got = length_pass_gap(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [True] * len(rows),
        iters=LENGTH_BIAS_ITERS,
        seed=run.sample.seed,
    )
    return {
        "statistic": got.statistic,
        "ci95": got.ci95,
        "method": got.method,
        "n": got.n,
        "n_short": got.n_short,
        "n_long": got.n_long,
        "reason": got.reason,
    }


def self_consistency_reading(measurement: Measurement, *, human_kappa: float | None) -> dict | None:
    """The gate's `self_consistency`: the stored flip rate and kappa of the judge with itself over the run's
    repeats, with their intervals, and `warning` (with a sentence in `words`) when that kappa is below
    `human_kappa`, the judge's kappa against the humans. None when the run judged each item once."""
    stored = measurement.self_consistency
    if not stored:
        return None
    kappa_self = stored.get("kappa_self")
    warning = kappa_self is not None and human_kappa is not None and kappa_self < human_kappa
    words = ""
    if warning:
        words = (
            f"the judge disagrees with itself more than with people: kappa with itself {kappa_self:.3f} over "
            f"{stored['repeats']} repeats, with the humans {human_kappa:.3f}; its verdicts are partly chance "
            "(lower the temperature, or make the prompt's criteria sharper) before trusting its agreement"
        )
    return {
        "repeats": stored["repeats"],
        "n": stored["n"],
        "flip_rate": stored["flip_rate"],
        "flip_rate_ci95": stored["flip_rate_ci95"],
        "kappa_self": kappa_self,
        "kappa_self_ci95": stored["kappa_self_ci95"],
        "kappa_human": human_kappa,
        "warning": warning,
        "words": words,
    }
