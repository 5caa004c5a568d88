"""The gate's `criteria` object: each criterion a judge version scores, its figures from the latest
measurement, and (with a threshold) whether it passes, decided as the verdict's gate is (gate_decide)."""

from __future__ import annotations

from typing import Any

from calibration.models import Judge, JudgeVersion, Measurement
from evalstats import agreement_from_counts, gate_decide

# The figures of a criterion a viewer blind to an item of the sample does not see.
CRITERION_WITHHELD = (
    "kappa",
    "kappa_ci95",
    "alpha",
    "raw_agreement",
    "baseline",
    "reasons",
    "confusion",
    "per_stratum",
    "invalid",
)


def criteria_gate(version: JudgeVersion, judge: Judge, measurement: Measurement | None) -> dict[str, dict[str, Any]]:
    """{criterion: {"n", "kappa", "weights", "alpha", "kappa_ci95", "threshold", "status", ...}} in name
    order; status is pass / fail for a criterion with a threshold, `ungated` without one, `unmeasured`
    before the version is measured. {} for a version that scores no criteria."""
    out: dict[str, dict[str, Any]] = {}
    measured = (measurement.criteria or {}) if measurement is not None else {}
    for entry in version.criteria or []:
        name, threshold = entry["name"], entry.get("threshold")
        figures = measured.get(name)
        if figures is None:
            out[name] = {
                "n": 0,
                "kappa": None,
                "weights": None,
                "alpha": None,
                "kappa_ci95": None,
                "raw_agreement": None,
                "baseline": None,
                "confusion": {},
                "per_stratum": {},
                "invalid": 0,
                "threshold": threshold,
                "status": "unmeasured",
                "reasons": ["not measured yet"],
            }
            continue
        weights = None if figures["weights"] == "none" else figures["weights"]
        status, reasons = "ungated", ["no threshold: reported, not gated"]
        if threshold is not None:
            ag = agreement_from_counts(figures["counts"], figures["values"], weights=weights, positive=None)
            ci = tuple(figures["kappa_ci95"]) if figures["kappa_ci95"] else None
            decision = gate_decide(ag, threshold=threshold, policy=judge.policy, min_n=judge.min_n, ci=ci)
            status, reasons = decision.status, list(decision.reasons)
        out[name] = {
            "n": figures["n"],
            "kappa": figures["kappa"],
            "weights": figures["weights"],
            "alpha": figures["alpha"],
            "kappa_ci95": figures["kappa_ci95"],
            "raw_agreement": figures["raw_agreement"],
            "baseline": figures["baseline"],
            "confusion": figures["confusion"],
            "per_stratum": figures["per_stratum"],
            "invalid": figures["invalid"],
            "threshold": threshold,
            "status": status,
            "reasons": reasons,
        }
    return out


def criteria_failing(criteria: dict[str, dict[str, Any]]) -> list[str]:
    """The gated criteria that do not pass, in name order."""
    return [name for name, c in criteria.items() if c["threshold"] is not None and c["status"] != "pass"]


def withhold_criteria(criteria: dict[str, dict[str, Any]]) -> None:
    """Blank the figures of every criterion (status, n and threshold stay)."""
    for c in criteria.values():
        for key in CRITERION_WITHHELD:
            c[key] = [] if key == "reasons" else {} if key in ("confusion", "per_stratum") else None
