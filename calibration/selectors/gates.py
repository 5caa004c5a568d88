"""The gate of a judge version: its latest measurement against the threshold, with the figures withheld
when the sample holds answers the viewer's blind scope hides."""

from __future__ import annotations

from django.db.models import F, Q

from annotation.models import Answer
from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import (
    CalibrationRun,
    Judge,
    JudgeVersion,
    Measurement,
    SampleItem,
    Verdict,
)
from evalstats import agreement_from_counts, gate_decide, stratified_bootstrap_kappa_ci
from evalstats.coverage import coverage_warning
from evalstats.invalid import invalid_as_disagreement
from evalstats.sampling import budget_weights, plan_allocation

# Draws of the conservative table's bootstrap, as many as calibration_close draws for the stored one.
BOOTSTRAP_ITERS = 2000


def latest_measurement(version: JudgeVersion) -> Measurement | None:
    """The newest measurement of a version (the one its gate reads)."""
    return (
        Measurement.objects.filter(judge_version=version)
        .select_related("run__sample")
        .order_by("-measured_at", "-id")
        .first()
    )


def measurement_agreement(measurement: Measurement):
    """The Agreement object of a measurement, rebuilt from its stored counts."""
    return agreement_from_counts(
        measurement.confusion, measurement.labels, positive="correct", raters=("the humans", "the judge")
    )


def conservative_agreement(measurement: Measurement):
    """The Agreement the gate decides on: each invalid judge output counted as the judge label that
    disagrees with the human (evalstats.invalid), so unparseable outputs never make kappa more lenient."""
    labels, folded = invalid_as_disagreement(measurement.confusion, measurement.labels)
    return agreement_from_counts(folded, labels, positive="correct", raters=("the humans", "the judge"))


def conservative_bootstrap(measurement: Measurement) -> list | None:
    """The stratified bootstrap interval of the conservative kappa. Without invalid outputs the tables are
    the measured ones, so it is the stored interval; with them it is drawn again from the folded strata
    (same draws and seed as the stored one)."""
    if not measurement.invalid:
        return measurement.bootstrap_ci95
    tables = {s: invalid_as_disagreement(t, measurement.labels)[1] for s, t in measurement.strata.items()}
    if not tables or not sum(int(t.sum()) for t in tables.values()):
        return None
    return stratified_bootstrap_kappa_ci(tables, iters=BOOTSTRAP_ITERS, seed=measurement.run.sample.seed).as_list()


def sample_weighting(measurement: Measurement) -> dict | None:
    """How the measured sample stands to the strata budget it was drawn for, and the estimate weighted
    back to the budget: the budget-weighted conservative kappa (evalstats.stratified_bootstrap_kappa_ci
    with the budget's shares) and raw agreement. `follows_budget` is false when a floor raised a stratum
    above its share (`raised`) or a stratum had fewer answers than its share (`short`); then `words`
    says so. None for a sample with no stored allocation."""
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
            f"{', '.join(parts)}; weighted back to the budget, kappa is {_num(out['kappa_weighted'])} and raw "
            f"agreement {_num(out['raw_agreement_weighted'])}"
        )
    return out


def stale_items(measurement: Measurement) -> int:
    """How many items under a measurement's sample changed their final human label after it was measured:
    counted by the database (answers changed since, or whose verdict's stored human label is no longer
    the final one), whatever the sample's size."""
    run = measurement.run
    answers = SampleItem.objects.filter(sample_id=run.sample_id).values("answer_id")
    moved = (
        Verdict.objects.filter(run=run)
        .exclude(human_verdict=F("item__answer__final_verdict"))
        .values("item__answer_id")
    )
    return (
        Answer.objects.filter(Q(pk__in=answers, final_changed_at__gt=measurement.measured_at) | Q(pk__in=moved))
        .order_by()
        .count()
    )


def _confusion_dict(ag) -> dict:
    out = {}
    for i, h in enumerate(ag.labels):
        for j, jv in enumerate(ag.labels):
            if h == "invalid":
                continue  # humans never say invalid; keep the human/judge keys meaningful
            out[f"{h}/{jv}"] = ag.confusion[i][j]
    return out


# What a measurement's numbers would tell about the items under it: withheld from a viewer blind to one.
GATE_WITHHELD = (
    "raw_agreement",
    "kappa",
    "kappa_ci95",
    "bootstrap_ci95",
    "chance_agreement",
    "always_correct_agreement",
    "per_stratum",
    "confusion",
    "kappa_conservative",
    "kappa_invalid_as_label",
    "kappa_conservative_ci95",
    "bootstrap_ci95_conservative",
    "coverage_warning",
    "sample_weighting",
)


def sample_is_blind(measurement: Measurement | None, scope: BlindScope) -> bool:
    """True when the measured sample holds an answer in the viewer's blind scope. Then its confusion
    table, kappa and per-stratum counts are withheld from them: with the disagreement list (which
    leaves those answers out) they would give the hidden answers' human and judge verdicts away by
    subtraction, and outright when the table has one filled cell."""
    if measurement is None or not scope.blind:
        return False
    return SampleItem.objects.filter(
        sample_id=measurement.run.sample_id, answer_id__in=scope.answer_ids_query()
    ).exists()


def judge_gate(version: JudgeVersion, *, scope: BlindScope = OPERATOR) -> dict:
    """The INTERFACES gate object for a judge version: status pass / fail / unmeasured / stale.

    For a viewer whose blind `scope` holds an answer of the measured sample, the numbers in
    GATE_WITHHELD are null (empty) and `blind` is true; the status, n and threshold stay."""
    out = _gate(version)
    out["blind"] = False
    if scope.blind and out["status"] != "unmeasured" and sample_is_blind(latest_measurement(version), scope):
        for key in GATE_WITHHELD:
            out[key] = {} if key in ("per_stratum", "confusion") else None
        out["blind"] = True
        out["blind_reason"] = (
            "the calibration sample holds answers you are labelling blind; its agreement "
            "figures are hidden from you until those items are complete"
        )
        # The reasons and warnings quote the figures (kappa 0.41 below threshold 0.7).
        out["reasons"], out["warnings"] = [out["blind_reason"]], []
        out.pop("reason", None)
    return out


def _gate(version: JudgeVersion) -> dict:
    judge = Judge.objects.get(pk=version.judge_id)  # fresh: threshold, policy and min_n may have changed
    base = {
        "judge_version": version.pk,
        "config_hash": version.config_hash,
        "judge": judge.name,
        "version": version.number,
        "threshold": judge.threshold,
        "policy": judge.policy,
        "min_n": judge.min_n,
    }
    measurement = latest_measurement(version)
    if measurement is None:
        running = CalibrationRun.objects.filter(judge_version=version, status__in=("queued", "running")).first()
        return {
            **base,
            "status": "unmeasured",
            "n": 0,
            "raw_agreement": None,
            "kappa": None,
            "kappa_ci95": None,
            "kappa_conservative": None,
            "kappa_invalid_as_label": None,
            "kappa_conservative_ci95": None,
            "bootstrap_ci95_conservative": None,
            "coverage_warning": None,
            "sample_weighting": None,
            "invalid": 0,
            "chance_agreement": None,
            "always_correct_agreement": None,
            "per_stratum": {},
            "confusion": {},
            "dataset_hash": None,
            "measured_at": None,
            "reason": "not measured yet"
            + (f"; calibration run {running.pk} is {running.status}" if running else "; run calibrate"),
            "reasons": ["not measured yet"],
            "run": running.pk if running else None,
        }
    ag = measurement_agreement(measurement)
    conservative = conservative_agreement(measurement)
    boot_conservative = conservative_bootstrap(measurement)
    ci = tuple(boot_conservative) if boot_conservative else None
    decision = gate_decide(conservative, threshold=judge.threshold, policy=judge.policy, min_n=judge.min_n, ci=ci)
    stale = stale_items(measurement)
    status = "stale" if stale else decision.status
    reasons = list(decision.reasons)
    if measurement.invalid:
        # The decision's own line names the figure it read.
        reasons = [
            r.replace("kappa ", "conservative kappa ", 1) if r.startswith(("kappa ", "lower 95% bound of kappa")) else r
            for r in reasons
        ]
        reasons.append(
            f"decided on the conservative kappa ({_num(conservative.kappa)}): the {measurement.invalid} invalid "
            "judge output(s) count as the judge label that disagrees with the human; counted as a third "
            f"label instead they would give kappa {_num(ag.kappa)}"
        )
    coverage = coverage_warning(conservative.counts(), conservative.labels) if conservative.n else None
    weighting = sample_weighting(measurement)
    warnings = list(conservative.warnings) + ([coverage] if coverage else [])
    if weighting and weighting["words"]:
        warnings.append(weighting["words"])
    if stale:
        reasons.insert(0, f"{stale} final human label(s) in the sample changed after the measurement; recalibrate")
    per_stratum = {}
    for stratum, table in sorted(measurement.strata.items()):
        st = agreement_from_counts(table, measurement.labels, positive="correct")
        per_stratum[stratum] = {
            "n": st.n,
            "raw_agreement": st.raw_agreement,
            "kappa": st.kappa,
            "too_small": st.n < judge.min_n,
            **({"reason": st.reason} if st.kappa is None else {}),
        }
    out = {
        **base,
        "status": status,
        "n": ag.n,
        "raw_agreement": ag.raw_agreement,
        # `kappa` keeps its meaning (invalid outputs as a third judge label); the decision reads
        # `kappa_conservative`, and the two are equal when no output was invalid.
        "kappa": ag.kappa,
        "kappa_ci95": list(ag.kappa_ci95) if ag.kappa_ci95 else None,
        "bootstrap_ci95": measurement.bootstrap_ci95,
        "kappa_invalid_as_label": ag.kappa,
        "kappa_conservative": conservative.kappa,
        "kappa_conservative_ci95": list(conservative.kappa_ci95) if conservative.kappa_ci95 else None,
        "bootstrap_ci95_conservative": boot_conservative,
        "decided_on": "kappa_conservative",
        # The calibration sample is drawn by strata, so its bootstraps resample within them.
        "bootstrap_method": "stratified",
        "coverage_warning": coverage,
        "sample_weighting": weighting,
        "chance_agreement": ag.chance_agreement,
        "always_correct_agreement": ag.always_correct_agreement,
        "per_stratum": per_stratum,
        "confusion": _confusion_dict(ag),
        "dataset_hash": measurement.dataset_hash,
        "measured_at": measurement.measured_at.isoformat().replace("+00:00", "Z"),
        "invalid": measurement.invalid,
        "excluded": measurement.excluded,
        "stale_items": stale,
        "run": measurement.run_id,
        "reasons": reasons,
        "warnings": warnings,
    }
    if ag.kappa is None:
        out["reason"] = ag.reason
    elif conservative.kappa is None:
        out["reason"] = conservative.reason
    return out


def _num(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"
