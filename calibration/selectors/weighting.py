"""How a measured calibration sample stands to the strata budget it was drawn for, and its kappa weighted
back to that budget."""

from __future__ import annotations

from calibration.models import Measurement
from calibration.selectors.summary import measurement_figure
from evalstats import stratified_bootstrap_kappa_ci
from evalstats.invalid import invalid_as_disagreement
from evalstats.sampling import budget_weights, plan_allocation

# Draws of the weighted bootstrap, as many as calibration_close draws for the stored interval.
BOOTSTRAP_ITERS = 2000


def sample_weighting(measurement: Measurement) -> dict | None:
    """How the measured sample stands to the strata budget it was drawn for, and the estimate weighted
    back to the budget: the budget-weighted conservative kappa (evalstats.stratified_bootstrap_kappa_ci
    with the budget's shares) and raw agreement. `follows_budget` is false when a floor raised a stratum
    above its share (`raised`) or a stratum had fewer answers than its share (`short`); then `words`
    says so. None for a sample with no stored allocation. Worked out once per measurement (its sample and
    strata never change; calibration.selectors.summary)."""
    return measurement_figure(measurement, "sample_weighting", lambda: _sample_weighting(measurement))


def _sample_weighting(measurement: Measurement) -> dict | None:
    sample = measurement.run.sample
    allocation = {s: int(n) for s, n in (sample.allocation or {}).items()}
    if not allocation:
        return None
    plan = plan_allocation(sample.size, sample.available or {}, sample.budget or None)
    tables = {
        s: t
        for s, t in ((s, invalid_as_disagreement(t, measurement.labels)[1]) for s, t in measurement.strata.items())
        if int(t.sum()) > 0 and plan.shares.get(s, 0) > 0
    }
    measured_n = {s: int(t.sum()) for s, t in tables.items()}
    follows = allocation == plan.exact
    raised = sorted(s for s, n in allocation.items() if n > plan.exact.get(s, 0) and s not in plan.short)
    out: dict = {
        "follows_budget": follows,
        "budget_counts": plan.exact,
        "drawn": allocation,
        "raised": raised,
        "short": list(plan.short),
        "weights": budget_weights(measured_n, plan.shares),
        "raw_agreement_weighted": None,
        "kappa_weighted": None,
        "kappa_weighted_ci95": None,
        "words": None,
    }
    if tables:
        total = sum(plan.shares[s] for s in tables)
        out["raw_agreement_weighted"] = sum(
            plan.shares[s] / total * float(t.trace()) / measured_n[s] for s, t in tables.items()
        )
        boot = stratified_bootstrap_kappa_ci(
            tables, {s: plan.shares[s] for s in tables}, iters=BOOTSTRAP_ITERS, seed=sample.seed
        )
        out["kappa_weighted"], out["kappa_weighted_ci95"] = boot.kappa, boot.as_list()
    if not follows:
        parts = [f"{s} drew {allocation.get(s, 0)} (budget share {plan.exact[s]})" for s in sorted(plan.exact)]
        why = []
        if raised:
            why.append(f"the floor of one answer per stratum raised {', '.join(raised)}")
        if plan.short:
            why.append(
                f"{', '.join(plan.short)} had fewer labelled answers than {'its' if len(plan.short) == 1 else 'their'} share"
            )
        out["words"] = (
            f"The sample does not follow the strata budget ({'; '.join(why) or 'it was drawn under other shares'}): "
            f"{', '.join(parts)}; weighted back to the budget, kappa is {num(out['kappa_weighted'])} and raw "
            f"agreement {num(out['raw_agreement_weighted'])}"
        )
    return out


def num(x: float | None) -> str:
    """A figure as the gate's words print it (three decimals, or "undefined")."""
    return "undefined" if x is None else f"{x:.3f}"
