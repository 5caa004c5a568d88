"""Webhook events of the judge engine: a calibration or a grading finished, and a judge version's gate moved.

A gate is computed on read (calibration.selectors.gates), so its status change is detected by comparing
it with the status it was last seen in (evalapp.webhooks WatchedState, key "gate:<version id>"): at once
when calibration_close stores a measurement, and for every measured version by the beat task
`calibration.watch_gates` (every WEBHOOK_GATE_WATCH_SECONDS), which notices what moves a gate without a
new measurement: final human labels changing under a sample (pass -> stale), another served model, a
threshold edited. Gates are read in the operator's scope: a webhook goes to a receiver the admin set up,
never to an annotator's page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from calibration.models import CalibrationRun, GradingRun, Measurement
from calibration.selectors.gates import judge_gates
from evalapp.webhooks.selectors import webhooks_listening
from evalapp.webhooks.services import watched_state_swap, webhook_emit

GATE_EVENT = "gate.status_changed"


def gate_key(version_id: int) -> str:
    return f"gate:{version_id}"


def gate_statuses(version_ids: Iterable[int]) -> dict[int, str]:
    """The gate status of each version now (for `gates_check`'s `before`), empty when nobody listens."""
    ids = list(version_ids)
    if not ids or not webhooks_listening(GATE_EVENT):
        return {}
    return {pk: gate["status"] for pk, gate in judge_gates(ids).items()}


def gates_check(*, version_ids: Iterable[int] | None = None, before: dict[int, str] | None = None) -> list[dict]:
    """Emit gate.status_changed for each version whose gate moved since it was last seen; returns the
    payloads emitted. `version_ids` defaults to every measured version. A version never seen before is
    compared with `before` (its status just before the caller changed it) and otherwise only recorded:
    the first look is a baseline, not a change. Nothing is done while no webhook listens."""
    if not webhooks_listening(GATE_EVENT):
        return []
    if version_ids is None:
        version_ids = Measurement.objects.order_by().values_list("judge_version_id", flat=True).distinct()
    before = before or {}
    emitted: list[dict] = []
    for pk, gate in sorted(judge_gates(list(version_ids)).items()):
        with transaction.atomic():  # the status seen and its event together, or neither
            _gate_swap_emit(pk, gate, before.get(pk), emitted)
    return emitted


def _gate_swap_emit(pk: int, gate: dict, before: str | None, emitted: list[dict]) -> None:
    seen = watched_state_swap(key=gate_key(pk), value=gate["status"])
    old = seen if seen is not None else before
    if old is not None and old != gate["status"]:
        payload = {
            "judge_version": pk,
            "judge": gate["judge"],
            "version": gate["version"],
            "old": old,
            "new": gate["status"],
            "kappa": gate.get("kappa_conservative"),
            "threshold": gate["threshold"],
            "n": gate["n"],
            "reason": "; ".join(gate.get("reasons") or []),
        }
        webhook_emit(event=GATE_EVENT, payload=payload)
        emitted.append(payload)


def calibration_finished_emit(run: CalibrationRun, *, verdicts: int, errors: int, kappa: Any = None) -> None:
    """calibration.finished for a run that just closed (done or failed)."""
    if not webhooks_listening("calibration.finished"):
        return
    webhook_emit(
        event="calibration.finished",
        payload={
            "run": run.pk,
            "judge": run.judge_version.judge.name,
            "judge_version": run.judge_version_id,
            "version": run.judge_version.number,
            "status": run.status,
            "counts": {"total": run.total, "verdicts": verdicts, "errors": errors},
            "kappa": kappa,
            "message": run.message,
        },
    )


def grading_finished_emit(grading: GradingRun, *, graded: int, errors: int) -> None:
    """grading.finished for a grading that just closed (done or failed)."""
    if not webhooks_listening("grading.finished"):
        return  # one statement, and no judge read, while nobody listens
    webhook_emit(
        event="grading.finished",
        payload={
            "run": grading.pk,
            "system_run": grading.run_id,
            "judge": grading.judge_version.judge.name,
            "judge_version": grading.judge_version_id,
            "version": grading.judge_version.number,
            "status": grading.status,
            "counts": {"total": grading.total, "graded": graded, "errors": errors},
            "message": grading.message,
        },
    )
