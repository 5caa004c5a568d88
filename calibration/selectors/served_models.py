"""Which model the judge's server says it ran: on the measured calibration run, and since. A provider may
move a model name to new weights; a verdict served by another model than the one calibrated makes the
gate stale."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, Max, Min

from calibration.models import GradedAnswer, JudgeVersion, Measurement, Verdict


def _served(model: str, fingerprint: str) -> str:
    return f"{model} (fingerprint {fingerprint})" if fingerprint else model


def _same(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """The same served model: same name, and the same fingerprint when both reported one."""
    return a[0] == b[0] and (a[1] == b[1] or not a[1] or not b[1])


def served_models(measurements: Iterable[Measurement]) -> dict[int, dict]:
    """Per judge version id of the given (latest) measurements, the gate's `served_model`: the models the
    measured run's verdicts report, the newest reported by a later calibration or grading run of the
    version, whether it differs (`changed`) and the sentence saying so (`reason`), and a `warning` when
    the measured run itself was served by more than one. Two statements however many versions."""
    by_version = {m.judge_version_id: m for m in measurements}
    if not by_version:
        return {}
    measured_runs = {m.run_id for m in by_version.values()}
    calibrated: dict[int, list[dict]] = {}
    later: dict[int, list[tuple[Any, ...]]] = {}
    # One statement for the version's calibration verdicts, the measured run's among them.
    for row in (
        Verdict.objects.filter(run__judge_version_id__in=by_version)
        .exclude(served_model="")
        .values("run__judge_version_id", "run_id", "run__created_at", "served_model", "system_fingerprint")
        .annotate(n=Count("pk"), last=Max("pk"))
        .order_by()
    ):
        if row["run_id"] in measured_runs:
            calibrated.setdefault(row["run_id"], []).append(dict(row))
            continue
        later.setdefault(row["run__judge_version_id"], []).append(
            (
                row["run__created_at"],
                "calibration",
                row["last"],
                row["run_id"],
                row["served_model"],
                row["system_fingerprint"],
            )
        )
    for graded in (
        GradedAnswer.objects.filter(grading__judge_version_id__in=by_version)
        .exclude(served_model="")
        .values("grading__judge_version_id", "grading_id", "grading__created_at", "served_model", "system_fingerprint")
        .annotate(last=Max("pk"))
        .order_by()
    ):
        later.setdefault(graded["grading__judge_version_id"], []).append(
            (
                graded["grading__created_at"],
                "grading",
                graded["last"],
                graded["grading_id"],
                graded["served_model"],
                graded["system_fingerprint"],
            )
        )
    out = {}
    for version_id, m in by_version.items():
        seen = sorted(calibrated.get(m.run_id, []), key=lambda r: r["last"])
        pairs = [(r["served_model"], r["system_fingerprint"]) for r in seen]
        since = [c for c in later.get(version_id, []) if c[0] > m.run.created_at]
        newest = max(since, key=lambda c: (c[0], c[1], c[2])) if since else None
        latest = (
            {"served_model": newest[4], "system_fingerprint": newest[5], "kind": newest[1], "run": newest[3]}
            if newest
            else None
        )
        changed = bool(pairs and newest and not any(_same((newest[4], newest[5]), p) for p in pairs))
        reason = None
        if changed and newest:
            reason = (
                f"the server now reports {_served(newest[4], newest[5])} ({newest[1]} run {newest[3]}); "
                f"calibrated on {_served(*pairs[-1])}; recalibrate"
            )
        warning = None
        if len(pairs) > 1:
            warning = (
                f"the measured calibration run was served by {len(pairs)} models: "
                + ", ".join(f"{_served(r['served_model'], r['system_fingerprint'])} on {r['n']} item(s)" for r in seen)
                + "; its figures mix them"
            )
        out[version_id] = {
            "calibrated": [
                {"served_model": r["served_model"], "system_fingerprint": r["system_fingerprint"], "n": r["n"]}
                for r in seen
            ],
            "latest": latest,
            "changed": changed,
            "reason": reason,
            "warning": warning,
        }
    return out


def served_model_history(version: JudgeVersion) -> list[dict]:
    """Every model the version's server reported, oldest first: when it was first and last seen, on how
    many verdicts, in calibration and grading runs (for the version page: when the model changed)."""
    rows: dict[tuple[str, str], dict] = {}

    def add(model: str, fingerprint: str, first, last, n: int) -> None:
        row = rows.setdefault(
            (model, fingerprint),
            {"served_model": model, "system_fingerprint": fingerprint, "first_seen": first, "last_seen": last, "n": 0},
        )
        row["first_seen"], row["last_seen"] = min(row["first_seen"], first), max(row["last_seen"], last)
        row["n"] += n

    for r in (
        Verdict.objects.filter(run__judge_version=version)
        .exclude(served_model="")
        .values("served_model", "system_fingerprint")
        .annotate(first=Min("created_at"), last=Max("created_at"), n=Count("pk"))
        .order_by()
    ):
        add(r["served_model"], r["system_fingerprint"], r["first"], r["last"], r["n"])
    for r in (
        GradedAnswer.objects.filter(grading__judge_version=version)
        .exclude(served_model="")
        .values("served_model", "system_fingerprint")
        .annotate(first=Min("grading__created_at"), last=Max("grading__created_at"), n=Count("pk"))
        .order_by()
    ):
        add(r["served_model"], r["system_fingerprint"], r["first"], r["last"], r["n"])
    return sorted(rows.values(), key=lambda r: (r["first_seen"], r["served_model"], r["system_fingerprint"]))
