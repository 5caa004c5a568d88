"""The gate's `criteria` object: each criterion a judge version scores, its figures from the latest
measurement, and (with a threshold) whether it passes, decided as the verdict's gate is (gate_decide)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection

from annotation.models import CriterionAdjudication, CriterionLabelEvent
from calibration.models import CalibrationRun, Judge, JudgeVersion, Measurement, SampleItem
from evalapp.keyset import ids_in
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
    # How many sample answers had values written since: it would date another annotator's work on an item.
    "stale_items",
)


def criterion_stale_counts(measurement_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """measurement id -> {criterion: sample answers with a value of it written or settled after the
    measurement}, in one statement however many measurements and items; absent when none.

    A criterion value is written (CriterionLabelEvent, stamped when written) or settled
    (CriterionAdjudication) whenever an answer's final value on it can move, so an answer counted here may
    have a new final value: the measurement's figure for that criterion no longer describes the labels."""
    ids = sorted(set(measurement_ids))
    if not ids:
        return {}
    q = connection.ops.quote_name
    keys = ids_in(ids)
    changes = (
        f"SELECT answer_id, name, at FROM {q(CriterionLabelEvent._meta.db_table)}"
        f" UNION ALL SELECT answer_id, name, at FROM {q(CriterionAdjudication._meta.db_table)}"
    )
    sql = (
        f"SELECT m.id, x.name, COUNT(DISTINCT i.answer_id) FROM {q(Measurement._meta.db_table)} m"
        f" JOIN {q(CalibrationRun._meta.db_table)} r ON r.id = m.run_id"
        f" JOIN {q(SampleItem._meta.db_table)} i ON i.sample_id = r.sample_id"
        f" JOIN ({changes}) x ON x.answer_id = i.answer_id AND x.at > m.measured_at"
        f" WHERE m.id IN ({keys.sql})"
        " GROUP BY m.id, x.name"
    )
    out: dict[int, dict[str, int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, keys.params)
        for pk, name, n in cursor.fetchall():
            out.setdefault(int(pk), {})[name] = int(n)
    return out


def criteria_gate(
    version: JudgeVersion, judge: Judge, measurement: Measurement | None, stale: dict[str, int] | None = None
) -> dict[str, dict[str, Any]]:
    """{criterion: {"n", "kappa", "weights", "alpha", "kappa_ci95", "threshold", "status", "stale_items",
    ...}} in name order; status is pass / fail for a criterion with a threshold, `ungated` without one,
    `unmeasured` before the version is measured, and `stale` once `stale` (criterion_stale_counts of the
    measurement) says values of it under the sample were written or settled after it was measured.
    {} for a version that scores no criteria."""
    stale = stale or {}
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
                "stale_items": 0,
            }
            continue
        weights = None if figures["weights"] == "none" else figures["weights"]
        status, reasons = "ungated", ["no threshold: reported, not gated"]
        if threshold is not None:
            ag = agreement_from_counts(figures["counts"], figures["values"], weights=weights, positive=None)
            ci = tuple(figures["kappa_ci95"]) if figures["kappa_ci95"] else None
            decision = gate_decide(ag, threshold=threshold, policy=judge.policy, min_n=judge.min_n, ci=ci)
            status, reasons = decision.status, list(decision.reasons)
        changed = stale.get(name, 0)
        if changed:
            status = "stale"
            reasons.insert(
                0, f"{changed} answer(s) in the sample had a {name} value written or settled after the measurement"
            )
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
            "stale_items": changed,
        }
    return out


def criteria_stale(criteria: dict[str, dict[str, Any]]) -> list[str]:
    """The gated criteria whose measurement is stale, in name order: they make the whole gate stale."""
    return [name for name, c in criteria.items() if c["threshold"] is not None and c["status"] == "stale"]


def criteria_failing(criteria: dict[str, dict[str, Any]]) -> list[str]:
    """The gated criteria that do not pass, in name order."""
    return [name for name, c in criteria.items() if c["threshold"] is not None and c["status"] != "pass"]


def withhold_criteria(criteria: dict[str, dict[str, Any]]) -> None:
    """Blank the figures of every criterion (status, n and threshold stay)."""
    for c in criteria.values():
        for key in CRITERION_WITHHELD:
            c[key] = [] if key == "reasons" else {} if key in ("confusion", "per_stratum") else None
