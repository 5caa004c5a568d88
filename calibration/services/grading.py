"""Grading runs: a judge version over a system run's answers, judged by the same engine as calibration
runs (chunk tasks over every worker, rate limit, heartbeat, cancel and resume, batched writes)."""

from __future__ import annotations

import math
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Answer
from annotation.selectors.runs import run_get
from calibration import policies, tasks
from calibration.backends import JudgeItem
from calibration.backends.runner import Outcome
from calibration.models import GradedAnswer, GradingRun
from calibration.selectors.diagnostics import question_records
from calibration.selectors.gates import judge_gate
from calibration.selectors.judges import judge_version_get
from calibration.services import engine
from calibration.services.criterion_measurement import version_criteria_definitions
from calibration.services.engine import FINAL_VERDICTS
from calibration.services.gate_events import grading_finished_emit
from evalapp.validation import TEXT_MAX, raise_problems, text_problem, whole_number_problem

# Answers per chunk task, at the least, when the caller names no size.
DEFAULT_CHUNK = 50
# Without a size, a chunk holds this many rounds of the judge's concurrency (a whole number of them, so no
# round goes out part-empty): a chunk's fixed cost (its reads, the close, the broker's round trip) is then
# a few per cent of its judging, where a 50-answer chunk at concurrency 16 spent more on it than on the
# judge. Sixteen rounds of a slow judge (10 s a call) still end well inside a task's time limit.
ROUNDS_PER_CHUNK = 16
# With a rate limit, a chunk holds at most this many seconds of the limit's calls (all of them, were it
# alone), so that a tight limit shared by many workers does not stretch a chunk past its time limit.
RATE_SECONDS_PER_CHUNK = 10
MAX_CHUNK = 10_000


class GradingRuns(engine.RunKind[GradingRun]):
    """The engine's adapter for grading runs: the keys are the system run's answers."""

    name = "grading"
    label = "grading"
    model = GradingRun
    resume_hint = "run grade_run --resume ID"

    def pending(self, run: GradingRun) -> list[int]:
        return grading_pending_answer_ids(run)

    def done_among(self, run_pk: int, keys: list[int]) -> set[int]:
        return set(
            GradedAnswer.objects.filter(grading_id=run_pk, answer_id__in=keys, verdict__in=FINAL_VERDICTS).values_list(
                "answer_id", flat=True
            )
        )

    def items(self, run: GradingRun, keys: list[int]) -> list[tuple[int, JudgeItem]]:
        answers = list(Answer.objects.filter(pk__in=keys).select_related("run__dataset").order_by("pk"))
        questions = question_records(answers)
        return [(a.pk, _judge_item(a, questions)) for a in answers]

    def record(self, run: GradingRun, outcomes: list[Outcome]) -> int:
        return graded_answers_record(grading=run, outcomes=outcomes)

    def criteria(self, run: GradingRun) -> list[dict]:
        dataset = run.run.dataset
        return version_criteria_definitions(run.judge_version, dataset) if dataset is not None else []

    def forget_errors(self, run_pk: int) -> None:
        GradedAnswer.objects.filter(grading_id=run_pk, verdict="error").delete()

    def close(self, *, run_id: int) -> GradingRun | None:
        return grading_close(grading_id=run_id)

    def chunk_signature(self, run_pk: int, keys: list[int]) -> Any:
        return tasks.grade_chunk.si(run_pk, keys)

    def close_signature(self, run_pk: int) -> Any:
        return tasks.close_grading.si(run_pk)

    def dispatch_task(self) -> Any:
        return tasks.grade_run


GRADING_RUNS = GradingRuns()


@transaction.atomic
def grading_start(
    *,
    judge_version_id: int | str,
    run_id: str,
    force: bool = False,
    reason: str = "",
    user=None,
    chunk_size: int | None = None,
    run_now: bool = False,
) -> GradingRun:
    """Grade a system run's answers with a judge version. Refused (exit 1 / HTTP 409) unless the version's
    gate is `pass`, or `force` is given with a reason; a forced grading records who, why and the gate.

    The answers go to the Celery workers in chunk tasks on commit; with run_now they are graded in this
    process on commit instead (no broker). Without `chunk_size`, chunks are sized to the judge version
    (grading_chunk_size).
    """
    raise_problems(
        "bad grading options",
        text_problem(reason or "", "reason", max_length=TEXT_MAX),
        None if chunk_size is None else whole_number_problem(chunk_size, "chunk_size", minimum=1, maximum=MAX_CHUNK),
    )
    version = judge_version_get(judge_version_id)
    if chunk_size is None:
        chunk_size = grading_chunk_size(params=version.params or {})
    run = run_get(run_id)
    gate = judge_gate(version)
    policies.check_can_grade(gate_status=gate["status"], force=force, reason=reason)
    forced = gate["status"] != "pass"
    grading = GradingRun.objects.create(
        judge_version=version,
        run=run,
        gate_status=gate["status"],
        gate=gate,
        forced=forced,
        forced_by=user if forced else None,
        force_reason=reason if forced else "",
        total=run.answers.count(),
        chunk_size=chunk_size,
        dispatches=1,
    )
    if run_now:
        transaction.on_commit(lambda: engine.run_here(kind=GRADING_RUNS, run_id=grading.pk))
    else:
        engine.dispatch_on_commit(kind=GRADING_RUNS, run_id=grading.pk)
    return grading


def grading_chunk_size(*, params: dict) -> int:
    """Answers per chunk task for a judge version's parameters: ROUNDS_PER_CHUNK rounds of its concurrency
    (at least DEFAULT_CHUNK answers, a whole number of rounds), and with a rate limit no more than
    RATE_SECONDS_PER_CHUNK seconds of it. Concurrency 8 (the default): 128; 16: 256; 1: 50."""
    concurrency = max(1, int(params.get("concurrency", 8)))
    rounds = max(ROUNDS_PER_CHUNK, math.ceil(DEFAULT_CHUNK / concurrency))
    size = concurrency * rounds
    rate = float(params.get("rate_limit") or 0)
    if rate > 0:
        size = min(size, max(concurrency, math.ceil(rate * RATE_SECONDS_PER_CHUNK)))
    return max(1, min(MAX_CHUNK, size))


def grading_dispatch(*, grading_id: int) -> int:
    """Fan a grading's pending answers out to the workers in chunks (the dispatch task's body)."""
    return engine.run_dispatch(kind=GRADING_RUNS, run_id=grading_id)


def grading_pending_answer_ids(grading: GradingRun) -> list[int]:
    """The answers of the graded run with no final verdict in this grading yet (missing, or an error)."""
    done = GradedAnswer.objects.filter(grading=grading, verdict__in=FINAL_VERDICTS).values("answer_id")
    return list(
        Answer.objects.filter(run_id=grading.run_id).exclude(pk__in=done).order_by("pk").values_list("pk", flat=True)
    )


def grading_cancel(*, grading_id: int) -> GradingRun:
    """Stop a grading: its chunk tasks stop within a second. Verdicts so far are kept."""
    return engine.run_cancel(kind=GRADING_RUNS, run_id=grading_id)


def grading_resume(*, grading_id: int) -> GradingRun:
    """Send again the answers of a grading that have no final verdict (after a worker died, errors, or a
    cancel). Safe any time: one verdict per (grading, answer), chunks skip answers already graded."""
    return engine.run_resume(kind=GRADING_RUNS, run_id=grading_id)


def grading_chunk_judge(*, grading_id: int, answer_ids: list[int]) -> dict:
    """Grade one chunk of a grading's answers (the chunk task's body; see engine.chunk_judge)."""
    return engine.chunk_judge(kind=GRADING_RUNS, run_id=grading_id, keys=answer_ids)


def grading_chunk_give_up(*, grading_id: int, answer_ids: list[int], error: str) -> None:
    """After the last retry: the chunk's pending answers become `error` verdicts so the grading can close."""
    engine.chunk_give_up(kind=GRADING_RUNS, run_id=grading_id, keys=answer_ids, error=error)


def _judge_item(answer: Answer, questions: dict) -> JudgeItem:
    record = questions.get(answer.pk) or {}
    return JudgeItem(
        run_id=answer.run.run_id,
        qid=answer.qid,
        question=record.get("question") or "",
        answer=answer.answer,
        expected=record.get("expected"),
        gold_text=record.get("gold_text"),
    )


def _graded_fields(outcome: Outcome) -> dict:
    result = outcome.result
    return {
        "verdict": result.verdict if result else "error",
        "raw_output": result.raw_output if result else outcome.error,
        "latency_ms": result.latency_ms if result else None,
        "values": result.values if result else {},
        "served_model": result.served_model if result else "",
        "system_fingerprint": result.system_fingerprint if result else "",
    }


@transaction.atomic
def graded_answers_record(*, grading: GradingRun, outcomes: list[Outcome]) -> int:
    """Write a batch of answer verdicts in one transaction, each answer exactly once: an existing final
    verdict wins, an `error` row is replaced. Returns how many rows were written."""
    return engine.outcomes_write(
        model=GradedAnswer,
        run_field="grading",
        key_field="answer",
        run=grading,
        outcomes=outcomes,
        fields=_graded_fields,
    )


@transaction.atomic
def grading_close(*, grading_id: int) -> GradingRun | None:
    """Close a grading once every answer has a verdict: done, or failed when answers errored (a resume
    grades those again). Idempotent and safe from every chunk task and a chord: the row is locked and
    a closed grading is left alone; one with answers still pending is left running."""
    grading = GradingRun.objects.select_for_update().filter(pk=grading_id).first()
    if grading is None or grading.status not in engine.ACTIVE_STATUSES:
        return grading
    counts = GradedAnswer.objects.filter(grading=grading).aggregate(
        n=Count("pk"), errors=Count("pk", filter=Q(verdict="error"))
    )
    if counts["n"] < grading.total:
        return grading
    grading.finished_at = timezone.now()
    if counts["errors"]:
        example = (
            GradedAnswer.objects.filter(grading=grading, verdict="error")
            .order_by("answer_id")
            .values_list("raw_output", flat=True)
            .first()
        )
        grading.status = "failed"
        grading.message = (
            f"{counts['errors']} of {grading.total} answer(s) could not be judged (e.g. "
            f"{(example or '')[:200]}); resume the grading to try them again"
        )
    else:
        grading.status, grading.message = "done", ""
    grading.save(update_fields=["status", "finished_at", "message"])
    grading_finished_emit(grading, graded=counts["n"] - counts["errors"], errors=counts["errors"])
    return grading
