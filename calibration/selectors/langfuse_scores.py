"""A judge version's grades pushed back to Langfuse: the score-create payloads (`POST /api/public/scores`,
Langfuse's public OpenAPI schema, `CreateScoreRequest`) of its verdicts on answers imported from Langfuse.

Each graded answer that knows its trace (`langfuse_trace_id`, kept by `import_run --format langfuse`)
gives a BOOLEAN score on that trace, and each criterion value it scored a CATEGORICAL one; a run that
knows its Langfuse dataset run gives a NUMERIC score on it, the share the judge found correct. Every
comment says the gate the verdicts stand on. The ids are fixed by (configuration, run, qid, name), so
sending the file again updates the same scores in Langfuse rather than adding new ones.
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from calibration.models import GradedAnswer, GradingRun, JudgeVersion
from calibration.selectors.gates import judge_gate
from evalapp.errors import ServiceError

VALID = ("correct", "incorrect")


@dataclass
class ScoreExport:
    """What the payloads came from and what was left out, counted."""

    scores: int = 0
    runs: list[str] = field(default_factory=list)
    no_trace: int = 0  # graded answers not imported from Langfuse: no trace to score
    invalid: int = 0  # verdicts the judge could not give (invalid, error)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scores": self.scores,
            "runs": self.runs,
            "skipped": {"no_trace": self.no_trace, "invalid": self.invalid},
        }


def _score_id(config_hash: str, run_id: str, qid: str, name: str) -> str:
    return hashlib.sha256("\t".join((config_hash, run_id, qid, name)).encode()).hexdigest()[:32]


def gate_sentence(gate: dict[str, Any]) -> str:
    """The gate the verdicts stand on, in one clause: `gate pass: kappa 0.812 (n 100, threshold 0.7)`."""
    if gate.get("kappa") is None:
        return f"gate {gate['status']}"
    return f"gate {gate['status']}: kappa {gate['kappa']:.3f} (n {gate['n']}, threshold {gate['threshold']})"


def langfuse_scores(*, version: JudgeVersion, run_id: str | None = None) -> tuple[list[dict[str, Any]], ScoreExport]:
    """The score payloads of the version's latest finished grading of each run (only `run_id`'s, if given),
    in (run, qid) order, and what they came from. Refused when the version has graded no run to the end."""
    gradings = GradingRun.objects.filter(judge_version=version, status="done").select_related("run")
    if run_id:
        gradings = gradings.filter(run__run_id=run_id)
    latest: dict[int, GradingRun] = {}
    for grading in gradings.order_by("run_id", "created_at", "pk"):
        latest[grading.run_id] = grading
    if not latest:
        on = f" of run {run_id!r}" if run_id else ""
        raise ServiceError(f"judge version {version.pk} has no finished grading{on} to export (grade_run first)")
    gate = judge_gate(version)
    label = f"{version.judge.name}-v{version.number}"
    standing = gate_sentence(gate)
    summary = ScoreExport()
    payloads: list[dict[str, Any]] = []
    for grading in sorted(latest.values(), key=lambda g: g.run.run_id):
        run = grading.run
        summary.runs.append(run.run_id)
        verdicts: list[str] = []
        payloads.extend(_answer_scores(grading, version, label, standing, gate["status"], summary, verdicts))
        dataset_run = (run.record or {}).get("langfuse_dataset_run_id")
        if isinstance(dataset_run, str) and verdicts:
            share = sum(v == "correct" for v in verdicts) / len(verdicts)
            payloads.append(
                {
                    "id": _score_id(version.config_hash, run.run_id, "", label),
                    "datasetRunId": dataset_run,
                    "name": label,
                    "value": round(share, 6),
                    "dataType": "NUMERIC",
                    "comment": f"{label}: {share:.1%} of {len(verdicts)} answers correct; {standing}",
                    "metadata": {"run_id": run.run_id, "judge_version": version.pk, "gate_status": gate["status"]},
                }
            )
    summary.scores = len(payloads)
    return payloads, summary


def _answer_scores(
    grading: GradingRun,
    version: JudgeVersion,
    label: str,
    standing: str,
    status: str,
    summary: ScoreExport,
    verdicts: list[str],
) -> Iterator[dict[str, Any]]:
    run_id = grading.run.run_id
    rows = (
        GradedAnswer.objects.filter(grading=grading)
        .order_by("answer__qid")
        .values_list("answer__qid", "answer__extra", "verdict", "values")
    )
    for qid, extra, verdict, values in rows.iterator(chunk_size=2000):
        if verdict not in VALID:
            summary.invalid += 1
            continue
        verdicts.append(verdict)
        trace = (extra or {}).get("langfuse_trace_id")
        if not isinstance(trace, str):
            summary.no_trace += 1
            continue
        metadata = {"run_id": run_id, "qid": qid, "judge_version": version.pk, "gate_status": status}
        yield {
            "id": _score_id(version.config_hash, run_id, qid, label),
            "traceId": trace,
            "name": label,
            "value": 1 if verdict == "correct" else 0,
            "dataType": "BOOLEAN",
            "comment": f"{label} ({version.config_hash[:19]}…): {verdict}; {standing}",
            "metadata": metadata,
        }
        for criterion, value in sorted((values or {}).items()):
            if value == "invalid":
                continue
            name = f"{label}.{criterion}"
            yield {
                "id": _score_id(version.config_hash, run_id, qid, name),
                "traceId": trace,
                "name": name,
                "value": str(value),
                "dataType": "CATEGORICAL",
                "comment": f"{label} on {criterion}: {value}; {standing}",
                "metadata": metadata,
            }
