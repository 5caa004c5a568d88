"""The gate of a judge version: its latest measurement against the threshold, with the figures withheld
when the sample holds answers the viewer's blind scope hides."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.models import OuterRef, Subquery

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
from calibration.selectors.blind_samples import sample_is_blind
from calibration.selectors.criterion_gates import (
    criteria_failing,
    criteria_gate,
    criteria_stale,
    criterion_stale_counts,
    withhold_criteria,
)
from calibration.selectors.family_bias import family_bias
from calibration.selectors.per_annotator import per_annotator
from calibration.selectors.reliability import length_bias_gap, self_consistency_reading
from calibration.selectors.served_models import served_models
from calibration.selectors.summary import measurement_figure
from calibration.selectors.weighting import num as _num
from calibration.selectors.weighting import sample_weighting
from evalapp.keyset import ids_in
from evalstats import agreement_from_counts, gate_decide, stratified_bootstrap_kappa_ci
from evalstats.coverage import coverage_warning
from evalstats.invalid import invalid_as_disagreement

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
    (same draws and seed as the stored one), once per measurement (calibration.selectors.summary)."""
    if not measurement.invalid:
        return measurement.bootstrap_ci95
    return measurement_figure(measurement, "conservative_bootstrap", lambda: _conservative_bootstrap(measurement))


def _conservative_bootstrap(measurement: Measurement) -> list | None:
    tables = {s: invalid_as_disagreement(t, measurement.labels)[1] for s, t in measurement.strata.items()}
    if not tables or not sum(int(t.sum()) for t in tables.values()):
        return None
    return stratified_bootstrap_kappa_ci(tables, iters=BOOTSTRAP_ITERS, seed=measurement.run.sample.seed).as_list()


def stale_items(measurement: Measurement) -> int:
    """How many items under a measurement's sample changed their final human label after it was measured:
    counted by the database (answers changed since, or whose verdict's stored human label is no longer
    the final one), whatever the sample's size."""
    return stale_counts([measurement.pk]).get(measurement.pk, 0)


def stale_counts(measurement_ids: Iterable[int]) -> dict[int, int]:
    """`stale_items` of many measurements in one statement: measurement id -> stale items (absent: none).

    The sample's items join their answers and, on the measured run, their verdict (one at most: a run
    judges an item once); an item counts when its answer's final label changed after the measurement or
    differs from the human label its verdict stored. Written as joins, not OR EXISTS, so PostgreSQL walks
    the answers' primary key for the sample instead of scanning every answer."""
    ids = sorted(set(measurement_ids))
    if not ids:
        return {}
    q = connection.ops.quote_name
    keys = ids_in(ids)
    sql = (
        f"SELECT m.id, COUNT(*) FROM {q(Measurement._meta.db_table)} m"
        f" JOIN {q(CalibrationRun._meta.db_table)} r ON r.id = m.run_id"
        f" JOIN {q(SampleItem._meta.db_table)} i ON i.sample_id = r.sample_id"
        f" JOIN {q(Answer._meta.db_table)} a ON a.id = i.answer_id"
        f" LEFT JOIN {q(Verdict._meta.db_table)} v ON v.item_id = i.id AND v.run_id = m.run_id"
        f" WHERE m.id IN ({keys.sql})"
        " AND (a.final_changed_at > m.measured_at OR v.human_verdict <> a.final_verdict)"
        " GROUP BY m.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, keys.params)
        return {int(pk): int(n) for pk, n in cursor.fetchall()}


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
    "length_bias",
    "self_consistency",
)

__all__ = ["GATE_WITHHELD", "judge_gate", "judge_gate_measured", "judge_gates", "sample_is_blind"]


def judge_gate(version: JudgeVersion, *, scope: BlindScope = OPERATOR) -> dict:
    """The INTERFACES gate object for a judge version: status pass / fail / unmeasured / stale.

    For a viewer whose blind `scope` holds an answer of the measured sample, the numbers in
    GATE_WITHHELD are null (empty) and `blind` is true; the status, n and threshold stay."""
    return judge_gate_measured(version, scope=scope)[0]


def judge_gate_measured(version: JudgeVersion, *, scope: BlindScope = OPERATOR) -> tuple[dict, Measurement | None]:
    """`judge_gate` and the measurement it read (None when unmeasured), for a page that shows more of it.

    One version's gate also carries the judge beside each annotator (`per_annotator`) and its lenience on
    its own model family (`family_bias`), both null when unmeasured or blind; `judge_gates` leaves them out
    so that a list of versions costs the same few statements however long it is."""
    gate, measurement = _gates([version.pk], scope)[version.pk]
    gate["per_annotator"] = per_annotator(measurement, scope=scope) if not gate["blind"] else None
    gate["family_bias"] = family_bias(version, measurement, scope=scope) if not gate["blind"] else None
    return gate, measurement


def judge_gates(versions: Iterable[JudgeVersion | int], *, scope: BlindScope = OPERATOR) -> dict[int, dict]:
    """`judge_gate` of many versions, by version id, in the same few statements however many there are:
    the versions with their judges, their latest measurements with the stale count of each, the runs of
    the unmeasured ones, and (for a blind viewer) the samples that hold a blind answer."""
    ids = [v if isinstance(v, int) else v.pk for v in versions]
    return {pk: gate for pk, (gate, _m) in _gates(ids, scope).items()}


def _gates(ids: list[int], scope: BlindScope) -> dict[int, tuple[dict, Measurement | None]]:
    if not ids:
        return {}
    # Fresh judges: threshold, policy and min_n may have changed since the caller read the version.
    found = {v.pk: v for v in JudgeVersion.objects.filter(pk__in=ids).select_related("judge")}
    newest = Measurement.objects.filter(judge_version_id=OuterRef("judge_version_id")).order_by("-measured_at", "-id")
    latest = {
        m.judge_version_id: m
        for m in Measurement.objects.filter(
            judge_version_id__in=found, pk=Subquery(newest.values("pk")[:1])
        ).select_related("run__sample")
    }
    stale = stale_counts(m.pk for m in latest.values())
    # Only versions that score criteria can have a stale one (no statement otherwise).
    criterion_stale = criterion_stale_counts(m.pk for pk, m in latest.items() if found[pk].criteria)
    served = served_models(latest.values())
    running: dict[int, CalibrationRun] = {}
    unmeasured = [pk for pk in found if pk not in latest]
    if unmeasured:
        for run in CalibrationRun.objects.filter(
            judge_version_id__in=unmeasured, status__in=("queued", "running")
        ).order_by("-created_at", "-id"):
            running.setdefault(run.judge_version_id, run)
    blind_samples: set[int] = set()
    if scope.blind and latest:
        blind_samples = set(
            SampleItem.objects.filter(
                sample_id__in={m.run.sample_id for m in latest.values()}, answer_id__in=scope.answer_ids_query()
            )
            .order_by()
            .values_list("sample_id", flat=True)
            .distinct()
        )
    out = {}
    for pk in ids:
        version = found.get(pk)
        if version is None:
            continue
        m = latest.get(pk)
        gate = _gate(
            version,
            version.judge,
            m,
            running.get(pk),
            stale.get(m.pk, 0) if m else 0,
            criterion_stale.get(m.pk) if m else None,
        )
        _served_drift(gate, served.get(pk))
        gate["blind"] = False
        if m is not None and m.run.sample_id in blind_samples:
            _withhold(gate)
        out[pk] = (gate, m)
    return out


def _served_drift(gate: dict, served: dict | None) -> None:
    """The served models on the gate; another model served since the measurement makes it stale."""
    gate["served_model"] = served
    if served is None:
        return
    if served["changed"]:
        gate["status"] = "stale"
        gate["reasons"].insert(0, served["reason"])
    if served["warning"]:
        gate["warnings"].append(served["warning"])


def _withhold(out: dict) -> None:
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
    withhold_criteria(out["criteria"])


def _gate(
    version: JudgeVersion,
    judge: Judge,
    measurement: Measurement | None,
    running: CalibrationRun | None,
    stale: int,
    criterion_stale: dict[str, int] | None = None,
) -> dict:
    base = {
        "judge_version": version.pk,
        "config_hash": version.config_hash,
        "judge": judge.name,
        "version": version.number,
        "threshold": judge.threshold,
        "policy": judge.policy,
        "min_n": judge.min_n,
    }
    criteria = criteria_gate(version, judge, measurement, criterion_stale)
    if measurement is None:
        return {
            **base,
            "criteria": criteria,
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
            "length_bias": None,
            "self_consistency": None,
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
    status = "stale" if stale or criteria_stale(criteria) else decision.status
    reasons = list(decision.reasons)
    failing = criteria_failing(criteria)
    if failing:
        # The gate passes only when the verdict and every gated criterion pass.
        status = "fail" if status == "pass" else status
        reasons += [f"criterion {name!r}: " + "; ".join(criteria[name]["reasons"]) for name in failing]
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
    # Its warning stays in `length_bias`: the gate's `warnings` list says what bears on the decision.
    length_bias = length_bias_gap(measurement)
    # Beside the decision, not part of it; a judge less consistent with itself than with people is a warning.
    consistency = self_consistency_reading(measurement, human_kappa=conservative.kappa)
    if consistency and consistency["warning"]:
        warnings.append(consistency["words"])
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
        "length_bias": length_bias,
        "self_consistency": consistency,
        "chance_agreement": ag.chance_agreement,
        "always_correct_agreement": ag.always_correct_agreement,
        "per_stratum": per_stratum,
        "confusion": _confusion_dict(ag),
        "criteria": criteria,
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
