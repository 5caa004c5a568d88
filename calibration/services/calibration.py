"""Calibration runs: a judge version over a stored sample, judged by the engine, closed by a measurement."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.selectors.datasets import dataset_get
from calibration import tasks
from calibration.backends import JudgeItem
from calibration.backends.runner import Outcome
from calibration.models import CalibrationRun, Judge, JudgeVersion, Measurement, RepeatVerdict, SampleItem, Verdict
from calibration.selectors.diagnostics import question_records
from calibration.selectors.judges import judge_version_get
from calibration.selectors.reliability import length_bias_measure
from calibration.services import engine
from calibration.services.criterion_measurement import criteria_measure, version_criteria_definitions
from calibration.services.engine import FINAL_VERDICTS
from calibration.services.gate_events import calibration_finished_emit, gate_statuses, gates_check
from calibration.services.judge_criteria import require_criteria_known
from calibration.services.repeats import (
    REPEATS_MAX,
    items_repeated,
    missing_slots,
    repeat_errors,
    repeat_verdicts_record,
    self_consistency_measure,
    split_outcomes,
    verdict_fields,
)
from calibration.services.samples import sample_for
from evalapp.errors import ServiceError
from evalapp.validation import SAMPLE_MAX, STORED_SEED_MAX, raise_problems, seed_problem, whole_number_problem
from evalstats import agreement, strata_tables, stratified_bootstrap_kappa_ci

DEFAULT_CHUNK = 20
BOOTSTRAP_ITERS = 2000
VERDICT_FIELDS = (
    "verdict",
    "raw_output",
    "reason",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "attempts",
    "values",
    "response_format",
    "served_model",
    "system_fingerprint",
)


class CalibrationRuns(engine.RunKind[CalibrationRun]):
    """The engine's adapter for calibration runs: the keys are the sample's items. A run with repeats asks
    the judge for each missing (item, repeat) slot of a key (calibration.services.repeats)."""

    name = "calibration"
    label = "calibration run"
    model = CalibrationRun
    resume_hint = "run calibrate --resume"

    def pending(self, run: CalibrationRun) -> list[int]:
        return pending_item_ids(run)

    def done_among(self, run_pk: int, keys: list[int]) -> set[int]:
        first = set(
            Verdict.objects.filter(run_id=run_pk, item_id__in=keys, verdict__in=FINAL_VERDICTS).values_list(
                "item_id", flat=True
            )
        )
        run = CalibrationRun.objects.filter(pk=run_pk).only("pk", "repeats").first()
        return first if run is None or run.repeats <= 1 else first & items_repeated(run, first)

    def items(self, run: CalibrationRun, keys: list[int]) -> list[tuple[Any, JudgeItem]]:
        items = list(SampleItem.objects.filter(pk__in=keys).select_related("answer__run__dataset").order_by("position"))
        questions = question_records([i.answer for i in items])
        if run.repeats <= 1:
            return [(i.pk, _judge_item(i, questions)) for i in items]
        slots = missing_slots(run, [i.pk for i in items])
        return [((i.pk, r), _judge_item(i, questions)) for i in items for r in slots.get(i.pk, [])]

    def record(self, run: CalibrationRun, outcomes: list[Outcome]) -> int:
        if run.repeats <= 1:
            return verdicts_record(run=run, outcomes=outcomes)
        first, rest = split_outcomes(run, outcomes)
        with transaction.atomic():
            return verdicts_record(run=run, outcomes=first) + repeat_verdicts_record(run=run, outcomes=rest)

    def criteria(self, run: CalibrationRun) -> list[dict]:
        return version_criteria_definitions(run.judge_version, run.sample.dataset)

    def forget_errors(self, run_pk: int) -> None:
        Verdict.objects.filter(run_id=run_pk, verdict="error").delete()
        RepeatVerdict.objects.filter(run_id=run_pk, verdict="error").delete()

    def close(self, *, run_id: int) -> CalibrationRun | None:
        return calibration_close(run_id=run_id)

    def chunk_signature(self, run_pk: int, keys: list[int]) -> Any:
        return tasks.judge_chunk.si(run_pk, keys)

    def close_signature(self, run_pk: int) -> Any:
        return tasks.close_run.si(run_pk)

    def dispatch_task(self) -> Any:
        return tasks.dispatch_run


CALIBRATION_RUNS = CalibrationRuns()


@transaction.atomic
def calibration_start(
    *,
    judge_version_id: int | str,
    dataset_name: str,
    size: int = 100,
    seed: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    resample: bool = False,
    repeats: int = 1,
    user=None,
    dispatch: bool = True,
) -> tuple[CalibrationRun, bool]:
    """Start calibrating a judge version on a dataset's labelled answers; the work goes to Celery on commit
    (with dispatch=False nothing is sent: the caller judges it in its own process, calibration_run_here).
    With `repeats` R (2..REPEATS_MAX) each item is judged R times, for the judge's self-consistency.

    Returns (run, created). A run of this version on this sample that is still queued or running is
    returned instead of starting a second one.
    """
    raise_problems(
        "bad calibration options",
        whole_number_problem(size, "sample", minimum=1, maximum=SAMPLE_MAX),
        seed_problem(seed, maximum=STORED_SEED_MAX),
        whole_number_problem(chunk_size, "chunk_size", minimum=1, maximum=10_000),
        # 1 judges each item once (no self-consistency); 2..REPEATS_MAX repeat it.
        whole_number_problem(repeats, "repeats", minimum=1, maximum=REPEATS_MAX),
    )
    version = judge_version_get(judge_version_id)
    dataset = dataset_get(dataset_name)
    require_criteria_known([c["name"] for c in version.criteria or []], dataset)
    judge = Judge.objects.select_for_update().get(pk=version.judge_id)
    sample = sample_for(judge=judge, dataset=dataset, size=size, seed=seed, resample=resample)
    active = CalibrationRun.objects.filter(
        judge_version=version, sample=sample, status__in=engine.ACTIVE_STATUSES
    ).first()
    if active is not None:
        return active, False
    total = _calibrated_items(version, sample.pk).count()
    if total == 0:
        raise ServiceError("the sample is empty: no labelled answers in the budgeted strata", code=3, status=409)
    run = CalibrationRun.objects.create(
        judge_version=version,
        sample=sample,
        total=total,
        chunk_size=chunk_size,
        repeats=repeats,
        created_by=user,
        dispatches=1,
    )
    if dispatch:
        engine.dispatch_on_commit(kind=CALIBRATION_RUNS, run_id=run.pk)
    return run, True


def calibration_run_here(*, run_id: int) -> CalibrationRun | None:
    """Judge a calibration run's pending items in this process and close it (no broker, no worker): for
    offline backends that answer at once, such as the demo's span judge."""
    engine.run_here(kind=CALIBRATION_RUNS, run_id=run_id)
    return CalibrationRun.objects.filter(pk=run_id).first()


def calibration_dispatch(*, run_id: int) -> int:
    """Fan a calibration run's pending items out to the workers in chunks (the dispatch task's body)."""
    return engine.run_dispatch(kind=CALIBRATION_RUNS, run_id=run_id)


def held_out_answer_ids(version: JudgeVersion) -> list[int]:
    """The answers a version must not be calibrated on: those its prompt shows as few-shot examples
    (params `held_out_exclude`, written by judge_version_propose), so its agreement is measured on the rest."""
    held = (version.params or {}).get("held_out_exclude") or []
    return [int(pk) for pk in held if isinstance(pk, int) and not isinstance(pk, bool)]


def _calibrated_items(version: JudgeVersion, sample_id: int):
    """The sample's items a run of this version judges: all but the version's held-out answers."""
    return SampleItem.objects.filter(sample_id=sample_id).exclude(answer_id__in=held_out_answer_ids(version))


def pending_item_ids(run: CalibrationRun) -> list[int]:
    """Sample items of a run with no final verdict yet (missing, or an error to try again); never the
    version's held-out answers. With repeats, also the items missing one of their repeat verdicts."""
    done = Verdict.objects.filter(run=run, verdict__in=FINAL_VERDICTS).values_list("item_id", flat=True)
    items = _calibrated_items(run.judge_version, run.sample_id).order_by("position")
    if run.repeats <= 1:
        return list(items.exclude(pk__in=done).values_list("pk", flat=True))
    first, repeated = set(done), items_repeated(run, done)
    return [pk for pk in items.values_list("pk", flat=True) if pk not in first or pk not in repeated]


def calibration_cancel(*, run_id: int) -> CalibrationRun:
    """Stop a calibration run: its chunk tasks stop within a second. Verdicts so far are kept."""
    return engine.run_cancel(kind=CALIBRATION_RUNS, run_id=run_id)


def calibration_resume(*, run_id: int) -> CalibrationRun:
    """Send again the items of a calibration run that have no final verdict (after a worker died, errors,
    or a cancel). Safe any time: verdicts are unique per (run, item), chunks skip items already judged."""
    return engine.run_resume(kind=CALIBRATION_RUNS, run_id=run_id)


def calibration_chunk_judge(*, run_id: int, item_ids: list[int]) -> dict:
    """Judge one chunk of a calibration run's items (the chunk task's body; see engine.chunk_judge)."""
    return engine.chunk_judge(kind=CALIBRATION_RUNS, run_id=run_id, keys=item_ids)


def calibration_chunk_give_up(*, run_id: int, item_ids: list[int], error: str) -> None:
    """After the last retry: the chunk's pending items become `error` verdicts so the run can close."""
    engine.chunk_give_up(kind=CALIBRATION_RUNS, run_id=run_id, keys=item_ids, error=error)


def _judge_item(item: SampleItem, questions: dict) -> JudgeItem:
    record = questions.get(item.answer_id) or {}
    return JudgeItem(
        run_id=item.answer.run.run_id,
        qid=item.answer.qid,
        question=record.get("question") or "",
        answer=item.answer.answer,
        expected=record.get("expected"),
        gold_text=record.get("gold_text"),
        stratum=item.stratum,
    )


@transaction.atomic
def verdicts_record(*, run: CalibrationRun, outcomes: list[Outcome]) -> int:
    """Write a batch of item verdicts in one transaction, each item exactly once: an existing final verdict
    wins (another worker got there first), an `error` row is replaced. Returns how many rows were written."""
    return engine.outcomes_write(
        model=Verdict, run_field="run", key_field="item", run=run, outcomes=outcomes, fields=verdict_fields
    )


@transaction.atomic
def verdict_record(*, run: CalibrationRun, item_id: int, outcome: Outcome) -> Verdict:
    """Write one item's verdict exactly once (see verdicts_record) and return the row that stands."""
    verdicts_record(
        run=run, outcomes=[Outcome(item_id, outcome.result, outcome.error, outcome.attempts, outcome.transient)]
    )
    return Verdict.objects.get(run=run, item_id=item_id)


@transaction.atomic
def calibration_close(*, run_id: int) -> CalibrationRun | None:
    """Close a run once every item has a verdict: measure agreement (or fail when items errored).

    Idempotent and safe to call from every chunk task and from a chord: the run row is locked and a
    closed run is left alone; a run with items still pending is left running.
    """
    run = CalibrationRun.objects.select_for_update().select_related("judge_version", "sample").filter(pk=run_id).first()
    if run is None or run.status not in engine.ACTIVE_STATUSES:
        return run
    verdicts = list(Verdict.objects.filter(run=run).select_related("item__answer"))
    if len(verdicts) < run.total:
        return run
    errors = [v for v in verdicts if v.verdict == "error"]
    repeated, repeat_failed, repeat_reason = repeat_errors(run) if run.repeats > 1 else (0, 0, "")
    if repeated < run.total * (run.repeats - 1):
        return run
    now = timezone.now()
    if errors or repeat_failed:
        run.status, run.finished_at = "failed", now
        what = "item(s) could not be judged" if run.repeats == 1 else "judgement(s) could not be made"
        run.message = (
            f"{len(errors) + repeat_failed} of {run.total * run.repeats} {what} "
            f"(e.g. {(errors[0].reason if errors else repeat_reason)[:200]}); resume the run to try them again"
        )
        run.save(update_fields=["status", "finished_at", "message"])
        calibration_finished_emit(run, verdicts=len(verdicts), errors=len(errors))
        return run
    human, judge, strata = [], [], []
    excluded = 0
    for v in verdicts:
        v.human_verdict = v.item.answer.final_verdict
        if not v.human_verdict:
            excluded += 1
            continue
        human.append(v.human_verdict)
        judge.append(v.verdict)
        strata.append(v.item.stratum)
    Verdict.objects.bulk_update(verdicts, ["human_verdict"], batch_size=2000)
    invalid = sum(1 for v in judge if v == "invalid")
    labels = ["correct", "incorrect"] + (["invalid"] if invalid else [])
    ag = agreement(human, judge, labels=labels, positive="correct")
    tables = {}
    ci = None
    if human:
        _, tables = strata_tables(human, judge, strata, labels=labels)
        try:
            boot = stratified_bootstrap_kappa_ci(tables, iters=BOOTSTRAP_ITERS, seed=run.sample.seed)
            ci = boot.as_list()
        except ValueError:
            ci = None
    # The gate as it stood before this measurement, for gate.status_changed (calibration.services.gate_events).
    gate_before = gate_statuses([run.judge_version_id])
    Measurement.objects.create(
        judge_version=run.judge_version,
        run=run,
        n=ag.n,
        labels=list(ag.labels),
        confusion=[list(r) for r in ag.confusion],
        strata={s: t.tolist() for s, t in tables.items()},
        bootstrap_ci95=ci,
        invalid=invalid,
        excluded=excluded,
        dataset_hash=run.sample.dataset_hash,
        criteria=criteria_measure(
            version=run.judge_version,
            dataset=run.sample.dataset,
            verdicts=verdicts,
            seed=run.sample.seed,
            iters=BOOTSTRAP_ITERS,
        )
        if run.judge_version.criteria
        else {},
        self_consistency=self_consistency_measure(run=run, verdicts=verdicts),
        length_bias=length_bias_measure(run),
        measured_at=now,
    )
    run.status, run.finished_at, run.message = "done", now, ""
    run.save(update_fields=["status", "finished_at", "message"])
    calibration_finished_emit(run, verdicts=len(verdicts), errors=0, kappa=ag.kappa)
    gates_check(version_ids=[run.judge_version_id], before=gate_before)
    return run
