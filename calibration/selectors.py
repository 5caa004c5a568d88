"""Reads: judges and versions, gates, run progress, disagreements, kappa history, ceilings and biases."""
from __future__ import annotations

import json

from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Answer, HumanLabel, VersionEntry
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import latest_version
from calibration.models import (
    CalibrationRun,
    GradedAnswer,
    GradingRun,
    Judge,
    JudgeVersion,
    Measurement,
    SampleItem,
    Verdict,
)
from evalapp.errors import NotFound
from evalapp.validation import as_id
from evalstats import agreement, agreement_from_counts, gate_decide

SECRET_PARAMS = ("api_key",)


def judge_version_get(judge_version_id) -> JudgeVersion:
    """A judge version by id, or NotFound naming it."""
    pk = as_id(judge_version_id)
    if pk is None:
        raise NotFound(f"unknown judge version {judge_version_id!r}")
    version = JudgeVersion.objects.select_related("judge").filter(pk=pk).first()
    if version is None:
        raise NotFound(f"unknown judge version {judge_version_id!r}")
    return version


def judge_get(name: str) -> Judge:
    """A judge by name, or NotFound naming it."""
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise NotFound(f"unknown judge {name!r}")
    return judge


def public_params(params: dict) -> dict:
    """Parameters safe to show: secrets masked."""
    return {k: ("***" if k in SECRET_PARAMS and v else v) for k, v in (params or {}).items()}


def latest_measurement(version: JudgeVersion) -> Measurement | None:
    """The newest measurement of a version (the one its gate reads)."""
    return Measurement.objects.filter(judge_version=version).select_related("run__sample").order_by("-measured_at", "-id").first()


def measurement_agreement(measurement: Measurement):
    """The Agreement object of a measurement, rebuilt from its stored counts."""
    return agreement_from_counts(measurement.confusion, measurement.labels, positive="correct")


def stale_items(measurement: Measurement) -> int:
    """How many items under a measurement's sample changed their final human label after it was measured."""
    run = measurement.run
    answers = SampleItem.objects.filter(sample_id=run.sample_id).values_list("answer_id", flat=True)
    changed_after = Answer.objects.filter(pk__in=answers, final_changed_at__gt=measurement.measured_at)
    changed = set(changed_after.values_list("pk", flat=True))
    for answer_id, then, now in (Verdict.objects.filter(run=run).values_list("item__answer_id", "human_verdict",
                                                                              "item__answer__final_verdict")):
        if then != now:
            changed.add(answer_id)
    return len(changed)


def _confusion_dict(ag) -> dict:
    out = {}
    for i, h in enumerate(ag.labels):
        for j, jv in enumerate(ag.labels):
            if h == "invalid":
                continue  # humans never say invalid; keep the human/judge keys meaningful
            out[f"{h}/{jv}"] = ag.confusion[i][j]
    return out


# What a measurement's numbers would tell about the items under it: withheld from a viewer blind to one.
GATE_WITHHELD = ("raw_agreement", "kappa", "kappa_ci95", "bootstrap_ci95", "chance_agreement",
                 "always_correct_agreement", "per_stratum", "confusion")


def sample_is_blind(measurement: Measurement | None, scope: BlindScope) -> bool:
    """True when the measured sample holds an answer in the viewer's blind scope. Then its confusion
    table, kappa and per-stratum counts are withheld from them: with the disagreement list (which
    leaves those answers out) they would give the hidden answers' human and judge verdicts away by
    subtraction, and outright when the table has one filled cell."""
    if measurement is None or not scope.blind:
        return False
    return SampleItem.objects.filter(sample_id=measurement.run.sample_id,
                                     answer_id__in=scope.answer_ids_query()).exists()


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
        out["blind_reason"] = ("the calibration sample holds answers you are labelling blind; its agreement "
                               "figures are hidden from you until those items are complete")
        # The reasons and warnings quote the figures (kappa 0.41 below threshold 0.7).
        out["reasons"], out["warnings"] = [out["blind_reason"]], []
        out.pop("reason", None)
    return out


def _gate(version: JudgeVersion) -> dict:
    judge = Judge.objects.get(pk=version.judge_id)  # fresh: threshold, policy and min_n may have changed
    base = {"judge_version": version.pk, "config_hash": version.config_hash, "judge": judge.name,
            "version": version.number, "threshold": judge.threshold, "policy": judge.policy, "min_n": judge.min_n}
    measurement = latest_measurement(version)
    if measurement is None:
        running = CalibrationRun.objects.filter(judge_version=version, status__in=("queued", "running")).first()
        return {**base, "status": "unmeasured", "n": 0, "raw_agreement": None, "kappa": None, "kappa_ci95": None,
                "chance_agreement": None, "always_correct_agreement": None, "per_stratum": {}, "confusion": {},
                "dataset_hash": None, "measured_at": None,
                "reason": "not measured yet" + (f"; calibration run {running.pk} is {running.status}" if running else
                                                "; run calibrate"),
                "reasons": ["not measured yet"], "run": running.pk if running else None}
    ag = measurement_agreement(measurement)
    ci = tuple(measurement.bootstrap_ci95) if measurement.bootstrap_ci95 else None
    decision = gate_decide(ag, threshold=judge.threshold, policy=judge.policy, min_n=judge.min_n, ci=ci)
    stale = stale_items(measurement)
    status = "stale" if stale else decision.status
    reasons = list(decision.reasons)
    if measurement.invalid:
        reasons.append(f"{measurement.invalid} invalid judge output(s) counted as disagreements")
    if stale:
        reasons.insert(0, f"{stale} final human label(s) in the sample changed after the measurement; recalibrate")
    per_stratum = {}
    for stratum, table in sorted(measurement.strata.items()):
        st = agreement_from_counts(table, measurement.labels, positive="correct")
        per_stratum[stratum] = {"n": st.n, "raw_agreement": st.raw_agreement, "kappa": st.kappa,
                                "too_small": st.n < judge.min_n, **({"reason": st.reason} if st.kappa is None else {})}
    out = {**base, "status": status, "n": ag.n, "raw_agreement": ag.raw_agreement, "kappa": ag.kappa,
           "kappa_ci95": list(ag.kappa_ci95) if ag.kappa_ci95 else None,
           "bootstrap_ci95": measurement.bootstrap_ci95,
           "chance_agreement": ag.chance_agreement, "always_correct_agreement": ag.always_correct_agreement,
           "per_stratum": per_stratum, "confusion": _confusion_dict(ag), "dataset_hash": measurement.dataset_hash,
           "measured_at": measurement.measured_at.isoformat().replace("+00:00", "Z"),
           "invalid": measurement.invalid, "excluded": measurement.excluded, "stale_items": stale,
           "run": measurement.run_id, "reasons": reasons, "warnings": list(ag.warnings)}
    if ag.kappa is None:
        out["reason"] = ag.reason
    return out


def calibration_run_get(run_id) -> CalibrationRun:
    """A calibration run by id, or NotFound naming it."""
    pk = as_id(run_id)
    if pk is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    run = CalibrationRun.objects.select_related("judge_version__judge", "sample__dataset").filter(pk=pk).first()
    if run is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    return run


def calibration_run_progress(run: CalibrationRun) -> dict:
    """done / total / invalid / errors, throughput and an ETA for a calibration run."""
    counts = Verdict.objects.filter(run=run).aggregate(
        done=Count("pk", filter=~Q(verdict="error")), invalid=Count("pk", filter=Q(verdict="invalid")),
        errors=Count("pk", filter=Q(verdict="error")))
    done = counts["done"]
    eta = rate = None
    if run.started_at and run.status in ("queued", "running") and done:
        elapsed = max(0.001, (timezone.now() - run.started_at).total_seconds())
        rate = done / elapsed
        eta = round((run.total - done - counts["errors"]) / rate, 1) if rate else None
    return {"run": run.pk, "judge_version": run.judge_version_id, "status": run.status, "total": run.total,
            "done": done, "invalid": counts["invalid"], "errors": counts["errors"],
            "pending": max(0, run.total - done - counts["errors"]),
            "items_per_second": round(rate, 2) if rate else None, "eta_seconds": eta, "message": run.message,
            "started_at": run.started_at.isoformat() if run.started_at else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "sample": run.sample_id, "dispatches": run.dispatches}


def grading_progress(grading: GradingRun) -> dict:
    """A judge's grading of a system run: its state, the gate it was started under, and the verdicts so far."""
    verdicts = dict(GradedAnswer.objects.filter(grading=grading).values("verdict").annotate(n=Count("pk"))
                    .values_list("verdict", "n"))
    return {"grading": grading.pk, "judge_version": grading.judge_version_id, "run_id": grading.run.run_id,
            "status": grading.status, "gate_status": grading.gate_status, "forced": grading.forced,
            "force_reason": grading.force_reason, "total": grading.total, "graded": sum(verdicts.values()),
            "verdicts": verdicts, "created_at": grading.created_at.isoformat(),
            "finished_at": grading.finished_at.isoformat() if grading.finished_at else None}


def judges_overview(*, scope: BlindScope = OPERATOR) -> list[dict]:
    """Every judge with its versions and each version's gate status (as the viewer may see it)."""
    out = []
    for judge in Judge.objects.prefetch_related("versions"):
        versions = [{"version": v, "gate": judge_gate(v, scope=scope)} for v in judge.versions.all()]
        out.append({"judge": judge, "versions": versions})
    return out


def kappa_history(judge: Judge, *, scope: BlindScope = OPERATOR) -> list[dict]:
    """Kappa of each version (its latest measurement) in version order, for the history chart; none for
    a version whose sample holds an answer in the viewer's blind `scope` (versions share samples)."""
    rows = []
    for version in judge.versions.order_by("number"):
        m = latest_measurement(version)
        if m is None or sample_is_blind(m, scope):
            rows.append({"version": version.number, "id": version.pk, "kappa": None, "ci": None})
            continue
        ag = measurement_agreement(m)
        rows.append({"version": version.number, "id": version.pk, "kappa": ag.kappa,
                     "ci": m.bootstrap_ci95 or (list(ag.kappa_ci95) if ag.kappa_ci95 else None)})
    return rows


def question_records(answers) -> dict:
    """answer pk -> its question record in the answer's run's dataset version (latest version as fallback)."""
    by_version: dict = {}
    for answer in answers:
        version_id = answer.run.dataset_version_id
        if version_id is None and answer.run.dataset_id:
            latest = latest_version(answer.run.dataset)
            version_id = latest.pk if latest else None
        by_version.setdefault(version_id, []).append(answer)
    out = {}
    for version_id, group in by_version.items():
        if version_id is None:
            continue
        texts = dict(VersionEntry.objects.filter(version_id=version_id, qid__in={a.qid for a in group})
                     .values_list("qid", "example__canonical"))
        for answer in group:
            if answer.qid in texts:
                out[answer.pk] = json.loads(texts[answer.qid])
    return out


def disagreements(measurement: Measurement, *, limit: int = 500, scope: BlindScope = OPERATOR) -> list[dict]:
    """Items where the judge and the final human label differ, with question, gold passage and outputs.

    Each names its run, so items of runs in the viewer's blind `scope` are left out."""
    rows = (Verdict.objects.filter(run=measurement.run).exclude(human_verdict="")
            .exclude(item__answer__run_id__in=scope.run_ids)
            .select_related("item__answer__run__dataset").order_by("item__position"))
    picked = [v for v in rows if v.verdict != v.human_verdict][:limit]
    questions = question_records([v.item.answer for v in picked])
    out = []
    for v in picked:
        record = questions.get(v.item.answer_id) or {}
        out.append({"run_id": v.item.answer.run.run_id, "qid": v.item.answer.qid, "stratum": v.item.stratum,
                    "question": record.get("question", ""), "gold_text": record.get("gold_text"),
                    "expected": record.get("expected"), "answer": v.item.answer.answer, "human": v.human_verdict,
                    "judge": v.verdict, "judge_output": v.raw_output, "reason": v.reason})
    return out


def human_ceiling(measurement: Measurement, *, scope: BlindScope = OPERATOR):
    """Human-human agreement on the sample's answers (first two annotators per answer): the judge's ceiling.

    None when fewer than two annotators labelled any sample answer, or when the sample holds an answer
    in the viewer's blind `scope`.
    """
    if sample_is_blind(measurement, scope):
        return None
    answers = SampleItem.objects.filter(sample_id=measurement.run.sample_id).values_list("answer_id", flat=True)
    by_answer: dict[int, list[str]] = {}
    for answer_id, verdict in (HumanLabel.objects.filter(answer_id__in=answers)
                               .order_by("answer_id", "labelled_at", "annotator_id").values_list("answer_id", "verdict")):
        by_answer.setdefault(answer_id, []).append(verdict)
    pairs = [v[:2] for v in by_answer.values() if len(v) >= 2]
    if not pairs:
        return None
    return agreement([p[0] for p in pairs], [p[1] for p in pairs], labels=["correct", "incorrect"], positive="correct")


def length_bias(measurement: Measurement, *, scope: BlindScope = OPERATOR) -> list[dict]:
    """Judge pass rate minus human pass rate by answer-length quartile (a judge that favours long answers
    shows a rising line). Quartiles by character count over the measured items; none for a viewer whose
    blind `scope` holds a sample answer."""
    if sample_is_blind(measurement, scope):
        return []
    rows = list(Verdict.objects.filter(run=measurement.run).exclude(human_verdict="")
                .values_list("item__answer__answer", "verdict", "human_verdict"))
    if not rows:
        return []
    rows.sort(key=lambda r: len(r[0]))
    n = len(rows)
    out = []
    for q in range(4):
        part = rows[q * n // 4:(q + 1) * n // 4]
        if not part:
            continue
        judge_rate = sum(1 for r in part if r[1] == "correct") / len(part)
        human_rate = sum(1 for r in part if r[2] == "correct") / len(part)
        out.append({"quartile": q + 1, "n": len(part), "min_chars": len(part[0][0]), "max_chars": len(part[-1][0]),
                    "judge_pass_rate": judge_rate, "human_pass_rate": human_rate, "difference": judge_rate - human_rate})
    return out
