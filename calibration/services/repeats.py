"""Repeated judgements of a calibration run (`repeats` R > 1): each sample item is judged R times, the
first judgement is its Verdict (so agreement with the humans is unchanged) and the others are
RepeatVerdicts, one per (run, item, repeat). An engine key stays a sample item; what the judge is asked
is a slot (item, repeat), so a chunk, a retry or a resume judges exactly the slots that are missing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Count, Q

from calibration.backends.runner import Outcome
from calibration.models import CalibrationRun, RepeatVerdict, Verdict
from calibration.services.engine import FINAL_VERDICTS
from evalstats.self_consistency import self_consistency

REPEATS_MAX = 20
# Draws of the self-consistency bootstraps, as many as the gate's other intervals.
SELF_CONSISTENCY_ITERS = 2000


def repeat_counts(run: CalibrationRun, item_ids: Iterable[int] | None = None) -> dict[int, int]:
    """item id -> how many final repeat verdicts (repeats 2..R) the run holds, in one statement."""
    rows = RepeatVerdict.objects.filter(run=run, verdict__in=FINAL_VERDICTS)
    if item_ids is not None:
        rows = rows.filter(item_id__in=list(item_ids))
    return dict(rows.order_by().values("item_id").annotate(n=Count("pk")).values_list("item_id", "n"))


def items_repeated(run: CalibrationRun, item_ids: Iterable[int]) -> set[int]:
    """The items of this list with all their R - 1 repeat verdicts final (every item, when R is 1)."""
    ids = list(item_ids)
    if run.repeats <= 1:
        return set(ids)
    return {pk for pk, n in repeat_counts(run, ids).items() if n >= run.repeats - 1}


def missing_slots(run: CalibrationRun, item_ids: list[int]) -> dict[int, list[int]]:
    """item id -> the repeats (1 = its Verdict) that have no final verdict yet, in two statements."""
    first_done = set(
        Verdict.objects.filter(run=run, item_id__in=item_ids, verdict__in=FINAL_VERDICTS).values_list(
            "item_id", flat=True
        )
    )
    done: dict[int, set[int]] = {}
    if run.repeats > 1:
        for item_id, repeat in RepeatVerdict.objects.filter(
            run=run, item_id__in=item_ids, verdict__in=FINAL_VERDICTS
        ).values_list("item_id", "repeat"):
            done.setdefault(item_id, set()).add(repeat)
    out = {}
    for pk in item_ids:
        slots = ([] if pk in first_done else [1]) + [
            r for r in range(2, run.repeats + 1) if r not in done.get(pk, set())
        ]
        if slots:
            out[pk] = slots
    return out


def verdict_fields(outcome: Outcome) -> dict[str, Any]:
    """The columns a judgement row keeps of one outcome (an outcome with no result is an `error`)."""
    result = outcome.result
    return {
        "verdict": result.verdict if result else "error",
        "raw_output": result.raw_output if result else "",
        "reason": (result.reason if result else outcome.error)[:5000],
        "latency_ms": result.latency_ms if result else None,
        "prompt_tokens": result.prompt_tokens if result else None,
        "completion_tokens": result.completion_tokens if result else None,
        "attempts": outcome.attempts,
        "values": result.values if result else {},
        "response_format": result.response_format if result else "",
        "served_model": result.served_model if result else "",
        "system_fingerprint": result.system_fingerprint if result else "",
    }


# What a repeat keeps: the judgement, not its token counts or response format (the first judgement has them).
REPEAT_FIELDS = ("verdict", "raw_output", "reason", "latency_ms", "attempts", "values", "served_model",
                 "system_fingerprint")  # fmt: skip


def _repeat_fields(outcome: Outcome) -> dict[str, Any]:
    fields = verdict_fields(outcome)
    return {name: fields[name] for name in REPEAT_FIELDS}


@transaction.atomic
def repeat_verdicts_record(*, run: CalibrationRun, outcomes: list[tuple[int, int, Outcome]]) -> int:
    """Write a batch of (item id, repeat, outcome) repeat verdicts in one transaction, each slot once: an
    existing final verdict wins (another worker got there first), an `error` row is replaced. One read,
    one bulk insert, one bulk update, whatever the batch size. Returns how many rows were written."""
    if not outcomes:
        return 0
    rows = RepeatVerdict.objects.select_for_update().filter(run=run, item_id__in={o[0] for o in outcomes})
    existing = {(row.item_id, row.repeat): row for row in rows}
    fresh: list[RepeatVerdict] = []
    replaced: list[RepeatVerdict] = []
    seen: set[tuple[int, int]] = set()
    names = list(_repeat_fields(outcomes[0][2]))
    for item_id, repeat, outcome in outcomes:
        if (item_id, repeat) in seen:
            continue
        seen.add((item_id, repeat))
        values = _repeat_fields(outcome)
        row = existing.get((item_id, repeat))
        if row is None:
            fresh.append(RepeatVerdict(run=run, item_id=item_id, repeat=repeat, **values))
        elif row.verdict not in FINAL_VERDICTS:
            for name, value in values.items():
                setattr(row, name, value)
            replaced.append(row)
    # A row another worker inserted since our read stands (the unique constraint); ours is dropped.
    RepeatVerdict.objects.bulk_create(fresh, ignore_conflicts=True, batch_size=1000)
    if replaced:
        RepeatVerdict.objects.bulk_update(replaced, names, batch_size=1000)
    return len(fresh) + len(replaced)


def split_outcomes(
    run: CalibrationRun, outcomes: list[Outcome]
) -> tuple[list[Outcome], list[tuple[int, int, Outcome]]]:
    """(first judgements keyed by item, repeats as (item, repeat, outcome)). A slot key is (item, repeat);
    a bare item key (a chunk given up after its last retry) stands for every slot of the item still missing."""
    first: list[Outcome] = []
    rest: list[tuple[int, int, Outcome]] = []
    keys: list[Any] = [o.key for o in outcomes]
    bare = [int(k) for k in keys if not isinstance(k, tuple | list)]
    missing = missing_slots(run, bare) if bare and run.repeats > 1 else {}
    for o, key in zip(outcomes, keys, strict=True):
        if isinstance(key, tuple | list):
            item_id, repeat = int(key[0]), int(key[1])
            slots = [repeat]
        else:
            item_id = int(key)
            slots = missing.get(item_id, [1]) if run.repeats > 1 else [1]
        for repeat in slots:
            plain = Outcome(item_id, o.result, o.error, o.attempts, o.transient)
            if repeat == 1:
                first.append(plain)
            else:
                rest.append((item_id, repeat, plain))
    return first, rest


def repeat_errors(run: CalibrationRun) -> tuple[int, int, str]:
    """(repeat rows, error rows among them, the first error's reason) of a run, in two statements."""
    counts = RepeatVerdict.objects.filter(run=run).aggregate(
        n=Count("pk"), errors=Count("pk", filter=Q(verdict="error"))
    )
    reason = ""
    if counts["errors"]:
        row = RepeatVerdict.objects.filter(run=run, verdict="error").order_by("pk").first()
        reason = row.reason if row else ""
    return counts["n"], counts["errors"], reason


def self_consistency_measure(*, run: CalibrationRun, verdicts: list[Verdict]) -> dict | None:
    """The stored self-consistency of a closed run with repeats: {repeats, n, flip_rate, flip_rate_ci95,
    kappa_self, kappa_self_ci95} over every judged item (the humans play no part), bootstraps over items
    seeded by the sample's seed; None when the run judged each item once."""
    if run.repeats <= 1:
        return None
    rows: dict[int, list[str]] = {v.item_id: [v.verdict] for v in verdicts}
    for item_id, verdict in (
        RepeatVerdict.objects.filter(run=run).order_by("item_id", "repeat").values_list("item_id", "verdict")
    ):
        rows.setdefault(item_id, []).append(verdict)
    table = [r for _, r in sorted(rows.items()) if len(r) == run.repeats]
    got = self_consistency(table, iters=SELF_CONSISTENCY_ITERS, seed=run.sample.seed)
    return {
        "repeats": run.repeats,
        "n": got.n,
        "flip_rate": got.flip_rate,
        "flip_rate_ci95": got.flip_rate_ci95,
        "kappa_self": got.kappa_self,
        "kappa_self_ci95": got.kappa_self_ci95,
    }
