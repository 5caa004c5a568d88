"""Writes for judges, calibration runs, verdicts, measurements and gradings.

Every service is keyword-only and raises ServiceError for input the caller must fix. Celery work is
scheduled only after the transaction commits (transaction.on_commit), never from inside it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone
from django.utils.text import slugify

from annotation.models import Answer, Dataset, Run
from annotation.selectors.datasets import dataset_get, latest_version
from annotation.selectors.runs import run_get
from calibration import policies
from calibration.backends import BACKENDS, JudgeItem, backend_for
from calibration.backends.runner import Outcome, RetryPolicy, judge_items, limiter_for
from calibration.models import (
    CalibrationRun,
    CalibrationSample,
    GradedAnswer,
    GradingRun,
    ImportedVerdict,
    Judge,
    JudgeVersion,
    Measurement,
    SampleItem,
    Verdict,
)
from calibration.selectors.diagnostics import question_records
from calibration.selectors.gates import judge_gate
from calibration.selectors.judges import judge_version_get
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.jsonl import parse_json_text, read_jsonl, require_file, require_str
from evalapp.validation import (
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    STORED_SEED_MAX,
    TEXT_MAX,
    raise_problems,
    seed_problem,
    text_problem,
    whole_number_problem,
)
from evalstats import agreement, sampling, strata_tables, stratified_bootstrap_kappa_ci

log = logging.getLogger(__name__)

# Parameters that change how a judge is reached, not what it says: left out of the config hash.
OPERATIONAL_PARAMS = ("base_url", "api_key", "timeout", "concurrency", "rate_limit", "max_attempts")
FINAL_VERDICTS = ("correct", "incorrect", "invalid")
DEFAULT_CHUNK = 20
VERDICT_BATCH = 25
BOOTSTRAP_ITERS = 2000


def config_hash(*, backend: str, model: str, prompt_template: str, params: dict, rubric: str) -> str:
    """`sha256:` + sha256 of the canonical JSON of what decides the judge's verdicts."""
    config = {"backend": backend, "model": model or "", "prompt_template": prompt_template or "",
              "params": {k: v for k, v in sorted((params or {}).items()) if k not in OPERATIONAL_PARAMS},
              "rubric": rubric or ""}
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _coerce_param(value):
    """Command-line k=v values: numbers and booleans as JSON would read them, else the string."""
    if not isinstance(value, str):
        return value
    # Strict JSON: "NaN" or "1e999" stay strings rather than become numbers no database stores.
    parsed, problem = parse_json_text(value)
    if problem is not None:
        return value
    return parsed if isinstance(parsed, (int, float, bool)) or parsed is None else value


def judge_url_allow_list() -> tuple[list[str], bool]:
    """The settings' URL prefixes a judge may call, and whether loopback addresses are allowed too."""
    return list(getattr(settings, "JUDGE_ALLOWED_BASE_URLS", [])), bool(getattr(settings, "JUDGE_ALLOW_LOOPBACK", False))


@transaction.atomic
def judge_version_create(*, judge_name: str, backend: str, model: str = "", prompt_template: str = "",
                         params: dict | None = None, rubric: str = "", threshold: float | None = None,
                         policy: str | None = None, min_n: int | None = None, user=None) -> tuple[JudgeVersion, bool]:
    """The judge version with this configuration, created (with the judge if new) unless it exists.

    Returns (version, created). Threshold, policy and minimum n belong to the judge and are updated
    when given. For an existing version, operational parameters given (OPERATIONAL_PARAMS) replace the
    stored ones; they are outside the config hash because they never change a verdict.
    """
    problems = []
    if not isinstance(judge_name, str) or not judge_name or slugify(judge_name) != judge_name \
            or len(judge_name) > NAME_MAX:
        problems.append(Problem(f"must be a slug (letters, digits, - and _) of at most {NAME_MAX} characters",
                                field="judge"))
    for field, value, limit in (("model", model or "", 300), ("prompt_template", prompt_template or "", RUBRIC_MAX),
                                ("rubric", rubric or "", RUBRIC_MAX)):
        found = text_problem(value, field, max_length=limit)
        if found is not None:
            problems.append(found)
    if backend not in BACKENDS:
        problems.append(Problem(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}", field="backend"))
    if threshold is not None and not -1 <= threshold <= 1:
        problems.append(Problem(f"kappa threshold {threshold} is outside -1..1", field="threshold"))
    if policy is not None and policy not in policies.GATE_POLICIES:
        problems.append(Problem(f"unknown policy {policy!r}; expected one of {', '.join(policies.GATE_POLICIES)}",
                                field="policy"))
    if min_n is not None:
        found = whole_number_problem(min_n, "min_n", minimum=1, maximum=SAMPLE_MAX)
        if found is not None:
            problems.append(found)
    if backend == "openai" and not model:
        problems.append(Problem("the openai backend needs --model (the model snapshot to call)", field="model"))
    params = {k: _coerce_param(v) for k, v in (params or {}).items()}
    for key in ("concurrency", "timeout", "rate_limit", "max_attempts"):
        if key in params and (not isinstance(params[key], (int, float)) or isinstance(params[key], bool) or params[key] < 0):
            problems.append(Problem("must be a non-negative number", field=f"param {key}"))
    if backend == "openai":
        base_url = params.get("base_url") or getattr(settings, "JUDGE_OPENAI_BASE_URL", "")
        allowed, loopback = judge_url_allow_list()
        if not policies.can_call_judge_url(str(base_url), allowed=allowed, loopback=loopback):
            problems.append(Problem(policies.judge_url_refusal(str(base_url), allowed=allowed, loopback=loopback),
                                    field="param base_url" if params.get("base_url") else "JUDGE_OPENAI_BASE_URL"))
    if problems:
        raise ServiceError("cannot create the judge version; nothing was written", problems)
    judge, _ = Judge.objects.get_or_create(name=judge_name)
    judge = Judge.objects.select_for_update().get(pk=judge.pk)
    changed = []
    for field, value in (("threshold", threshold), ("policy", policy), ("min_n", min_n)):
        if value is not None and getattr(judge, field) != value:
            setattr(judge, field, value)
            changed.append(field)
    if changed:
        judge.save(update_fields=changed)
    digest = config_hash(backend=backend, model=model, prompt_template=prompt_template, params=params, rubric=rubric)
    existing = JudgeVersion.objects.select_for_update().filter(judge=judge, config_hash=digest).first()
    if existing is not None:
        # What decides verdicts is immutable; how the judge is reached (base URL, key, concurrency, rate,
        # timeouts, attempts) may change, e.g. when the server moves or the key is rotated.
        operational = {k: v for k, v in params.items() if k in OPERATIONAL_PARAMS}
        current = {k: v for k, v in existing.params.items() if k in OPERATIONAL_PARAMS}
        if operational and operational != current:
            existing.params = {**{k: v for k, v in existing.params.items() if k not in OPERATIONAL_PARAMS}, **operational}
            existing.save(update_fields=["params"])
        return existing, False
    number = (judge.versions.aggregate(m=Max("number"))["m"] or 0) + 1
    version = JudgeVersion.objects.create(judge=judge, number=number, backend=backend, model=model or "",
                                          prompt_template=prompt_template or "", params=params, rubric=rubric or "",
                                          config_hash=digest, created_by=user)
    return version, True


@dataclass(frozen=True)
class VerdictImportResult:
    judge_version: int
    verdicts: int
    created: int
    unchanged: int

    def as_dict(self):
        return {"judge_version": self.judge_version, "verdicts": self.verdicts, "created": self.created,
                "unchanged": self.unchanged}


def verdicts_import(*, path: str | Path, judge_version_id) -> VerdictImportResult:
    """Import a replay judge's verdicts; every bad line is named and nothing is written unless all are good.

    Imported verdicts are immutable: a line that contradicts an earlier import is an error.
    """
    path = require_file(path)
    version = judge_version_get(judge_version_id)
    if version.backend != "replay":
        raise ServiceError(f"judge version {version.pk} uses the {version.backend!r} backend; "
                           "only a replay judge version takes imported verdicts")
    problems: list[Problem] = []
    rows, seen = [], {}
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
            continue
        run_id = require_str(obj, "run_id", line, problems, max_length=200)
        qid = require_str(obj, "qid", line, problems, max_length=200)
        verdict = obj.get("verdict")
        if verdict not in ("correct", "incorrect"):
            problems.append(Problem(f"verdict must be 'correct' or 'incorrect', not {verdict!r}", line=line, field="verdict"))
        if run_id and qid:
            if (run_id, qid) in seen:
                problems.append(Problem(f"a second verdict for {run_id}/{qid} (first on line {seen[(run_id, qid)]})",
                                        line=line, field="qid"))
            seen[(run_id, qid)] = line
        rows.append((line, run_id, qid, verdict, obj))
    run_ids = {r[1] for r in rows if r[1]}
    known = {}
    for run_id, qid in Answer.objects.filter(run__run_id__in=run_ids).values_list("run__run_id", "qid"):
        known[(run_id, qid)] = True
    known_runs = set(Run.objects.filter(run_id__in=run_ids).values_list("run_id", flat=True))
    existing = {(r, q): v for r, q, v in ImportedVerdict.objects.filter(judge_version=version, run_id__in=run_ids)
                .values_list("run_id", "qid", "verdict")}
    for line, run_id, qid, verdict, _obj in rows:
        if run_id and run_id not in known_runs:
            problems.append(Problem(f"unknown run {run_id!r}", line=line, field="run_id"))
        elif run_id and qid and (run_id, qid) not in known:
            problems.append(Problem(f"run {run_id!r} has no answer to {qid!r}", line=line, field="qid"))
        elif (run_id, qid) in existing and existing[(run_id, qid)] != verdict:
            problems.append(Problem(f"{run_id}/{qid} was imported as {existing[(run_id, qid)]!r}; imported verdicts "
                                    "never change (make a new judge version)", line=line, field="verdict"))
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    fresh = [ImportedVerdict(judge_version=version, run_id=r, qid=q, verdict=v, record=obj)
             for _line, r, q, v, obj in rows if (r, q) not in existing]
    with transaction.atomic():
        ImportedVerdict.objects.bulk_create(fresh, batch_size=2000)
    return VerdictImportResult(version.pk, len(rows), len(fresh), len(rows) - len(fresh))


# --- samples ------------------------------------------------------------------------------------

def _labelled_population(dataset: Dataset) -> dict[str, list[tuple[str, str, int]]]:
    """stratum -> [(run_id, qid, answer pk)] of the dataset's answers that carry a final human label.

    A stratum is the one of the question in the answer's own run's dataset version. Answers in a
    relabel audit flagged as interpretation drift stay out until the audit is resolved.
    """
    from annotation.models import VersionEntry
    from annotation.selectors.labels import held_out_answer_ids

    answers = list(Answer.objects.filter(run__dataset=dataset).exclude(final_verdict="")
                   .exclude(pk__in=held_out_answer_ids())
                   .values_list("pk", "run__run_id", "qid", "run__dataset_version_id"))
    latest = latest_version(dataset)
    version_ids = {v or (latest.pk if latest else None) for *_, v in answers} - {None}
    strata = {}
    for version_id, qid, stratum in (VersionEntry.objects.filter(version_id__in=version_ids)
                                     .values_list("version_id", "qid", "stratum").iterator(chunk_size=10_000)):
        strata[(version_id, qid)] = stratum
    population: dict[str, list] = {}
    for pk, run_id, qid, version_id in answers:
        stratum = strata.get((version_id or (latest.pk if latest else None), qid), "(unknown)")
        population.setdefault(stratum, []).append((run_id, qid, pk))
    return population


def sample_draw(*, judge: Judge, dataset: Dataset, size: int, seed: int = 0, floor: int = 1) -> CalibrationSample:
    """Draw and store a stratified sample of labelled answers for a judge (see evalstats.sampling)."""
    if size < 1:
        raise ServiceError("the sample size must be at least 1", [Problem("must be at least 1", field="sample")])
    population = _labelled_population(dataset)
    available = {s: len(v) for s, v in population.items()}
    if not available:
        raise ServiceError(f"dataset {dataset.name!r} has no answers with a final human label to calibrate on",
                           code=3, status=409)
    budget = dict(dataset.strata_budget or {})
    allocation = sampling.allocate(size, available, budget or None, floor=floor)
    picked = sampling.draw(population, allocation, seed=seed)
    latest = latest_version(dataset)
    sample = CalibrationSample.objects.create(
        judge=judge, dataset=dataset, dataset_hash=latest.dataset_hash if latest else "", size=size, seed=seed,
        allocation=allocation, available=available, budget=budget)
    SampleItem.objects.bulk_create([
        SampleItem(sample=sample, answer_id=pk, stratum=stratum, position=i)
        for i, (stratum, (_run_id, _qid, pk)) in enumerate(picked)
    ], batch_size=2000)
    return sample


def sample_for(*, judge: Judge, dataset: Dataset, size: int, seed: int, resample: bool = False) -> CalibrationSample:
    """The judge's stored sample for (dataset, size, seed), reused across its versions; drawn when missing."""
    if not resample:
        found = CalibrationSample.objects.filter(judge=judge, dataset=dataset, size=size, seed=seed).first()
        if found is not None:
            return found
    return sample_draw(judge=judge, dataset=dataset, size=size, seed=seed)


# --- calibration runs ---------------------------------------------------------------------------

@transaction.atomic
def calibration_start(*, judge_version_id, dataset_name: str, size: int = 100, seed: int = 0,
                      chunk_size: int = DEFAULT_CHUNK, resample: bool = False, user=None) -> tuple[CalibrationRun, bool]:
    """Start calibrating a judge version on a dataset's labelled answers; the work goes to Celery on commit.

    Returns (run, created). A run of this version on this sample that is still queued or running is
    returned instead of starting a second one.
    """
    raise_problems("bad calibration options",
                   whole_number_problem(size, "sample", minimum=1, maximum=SAMPLE_MAX),
                   seed_problem(seed, maximum=STORED_SEED_MAX),
                   whole_number_problem(chunk_size, "chunk_size", minimum=1, maximum=10_000))
    version = judge_version_get(judge_version_id)
    dataset = dataset_get(dataset_name)
    judge = Judge.objects.select_for_update().get(pk=version.judge_id)
    sample = sample_for(judge=judge, dataset=dataset, size=size, seed=seed, resample=resample)
    active = CalibrationRun.objects.filter(judge_version=version, sample=sample, status__in=("queued", "running")).first()
    if active is not None:
        return active, False
    total = sample.items.count()
    if total == 0:
        raise ServiceError("the sample is empty: no labelled answers in the budgeted strata", code=3, status=409)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, total=total, chunk_size=chunk_size,
                                        created_by=user, dispatches=1)
    transaction.on_commit(lambda: _dispatch(run.pk))
    return run, True


def _dispatch(run_pk: int) -> None:
    """Send a run's pending items to the broker. A broker that cannot be reached leaves the run queued with a
    message; a worker that starts later resumes it (or `calibrate --resume`)."""
    from calibration import tasks

    try:
        tasks.dispatch_run(run_pk)
    except Exception as exc:  # noqa: BLE001 - the run is committed; say why nothing moves
        log.exception("could not dispatch calibration run %s", run_pk)
        CalibrationRun.objects.filter(pk=run_pk).update(
            message=f"could not reach the Celery broker ({exc.__class__.__name__}: {exc}); "
                    "it will be resumed when a worker starts, or run calibrate --resume")


def pending_item_ids(run: CalibrationRun) -> list[int]:
    """Sample items of a run with no final verdict yet (missing, or an error to try again)."""
    done = Verdict.objects.filter(run=run, verdict__in=FINAL_VERDICTS).values_list("item_id", flat=True)
    return list(SampleItem.objects.filter(sample_id=run.sample_id).exclude(pk__in=done)
                .order_by("position").values_list("pk", flat=True))


@transaction.atomic
def calibration_cancel(*, run_id: int) -> CalibrationRun:
    """Stop a run: chunk tasks check the status before each item and stop. Verdicts so far are kept."""
    run = CalibrationRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    if run.status in ("queued", "running"):
        run.status, run.finished_at, run.message = "cancelled", timezone.now(), "cancelled"
        run.save(update_fields=["status", "finished_at", "message"])
    return run


@transaction.atomic
def calibration_resume(*, run_id: int) -> CalibrationRun:
    """Re-dispatch the items of a run that have no final verdict (after a worker died, errors, or a cancel).

    Safe to call any time: verdicts are unique per (run, item) and chunk tasks skip items already judged.
    """
    run = CalibrationRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"unknown calibration run {run_id!r}")
    if run.status == "done":
        return run
    run.status, run.finished_at, run.message = "running", None, ""
    run.dispatches += 1
    run.heartbeat_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "message", "dispatches", "heartbeat_at"])
    _redispatch(run.pk)
    return run


def _redispatch(run_pk: int) -> None:
    """Inside the transaction that claimed the run: errors are tried again, pending items sent on commit."""
    Verdict.objects.filter(run_id=run_pk, verdict="error").delete()
    transaction.on_commit(lambda: _dispatch(run_pk))


ACTIVE_STATUSES = ("queued", "running")


def _stalled(cutoff) -> Q:
    """Queued or running with no sign of life since `cutoff`: the heartbeat is older, or there never was one
    and the run was created before it (its first dispatch never reached a worker)."""
    return Q(status__in=ACTIVE_STATUSES) & (Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff))


def _claim_stalled(model, cutoff, now, **fields) -> list[int]:
    """The stalled runs of `model` this caller won, each by a conditional UPDATE that also refreshes the
    heartbeat: of two sweeps that saw the same run stalled only one updates a row, so only one dispatches."""
    won = []
    for pk in model.objects.filter(_stalled(cutoff)).values_list("pk", flat=True):
        if model.objects.filter(_stalled(cutoff), pk=pk).update(heartbeat_at=now, dispatches=F("dispatches") + 1,
                                                                 **fields):
            won.append(pk)
    return won


def calibration_resume_stalled(*, stalled_for: timedelta, now=None) -> list[int]:
    """Resume the calibration runs that are queued or running but have shown no sign of life for
    `stalled_for` (their worker died, or their chunks never reached one). Idempotent under concurrency."""
    now = now or timezone.now()
    resumed = []
    with transaction.atomic():
        for pk in _claim_stalled(CalibrationRun, now - stalled_for, now, status="running", message=""):
            _redispatch(pk)
            resumed.append(pk)
    return resumed


def grading_resume_stalled(*, stalled_for: timedelta, now=None) -> list[int]:
    """Resume the grading runs whose tasks have shown no sign of life for `stalled_for`. Idempotent under
    concurrency; answers already graded are skipped by the task."""
    from calibration import tasks

    now = now or timezone.now()
    with transaction.atomic():
        resumed = _claim_stalled(GradingRun, now - stalled_for, now)
        for pk in resumed:
            transaction.on_commit(lambda pk=pk: tasks.grade_run.delay(pk))
    return resumed


@dataclass(frozen=True)
class SweepResult:
    calibration: list[int]
    grading: list[int]

    def as_dict(self):
        return {"calibration": self.calibration, "grading": self.grading}


def stalled_runs_resume(*, stalled_for: timedelta | None = None, now=None) -> SweepResult:
    """The stall sweep: resume every calibration and grading run whose worker died. Cheap when nothing has
    stalled (one indexed query per kind of run) and safe to run anywhere at once: beat runs it every
    CALIBRATION_SWEEP_SECONDS, chunk tasks as they finish, `calibrate --wait` as it polls, a worker as it starts."""
    stalled_for = stalled_for if stalled_for is not None else timedelta(seconds=settings.CALIBRATION_STALL_SECONDS)
    now = now or timezone.now()
    result = SweepResult(calibration_resume_stalled(stalled_for=stalled_for, now=now),
                         grading_resume_stalled(stalled_for=stalled_for, now=now))
    if result.calibration or result.grading:
        log.warning("resumed stalled runs: calibration %s, grading %s", result.calibration, result.grading)
    return result


def _judge_item(item: SampleItem, questions: dict) -> JudgeItem:
    record = questions.get(item.answer_id) or {}
    return JudgeItem(run_id=item.answer.run.run_id, qid=item.answer.qid, question=record.get("question") or "",
                     answer=item.answer.answer, expected=record.get("expected"), gold_text=record.get("gold_text"),
                     stratum=item.stratum)


def _verdict_fields(outcome: Outcome) -> dict:
    result = outcome.result
    return {
        "verdict": result.verdict if result else "error",
        "raw_output": result.raw_output if result else "",
        "reason": (result.reason if result else outcome.error)[:5000],
        "latency_ms": result.latency_ms if result else None,
        "prompt_tokens": result.prompt_tokens if result else None,
        "completion_tokens": result.completion_tokens if result else None,
        "attempts": outcome.attempts,
    }


VERDICT_FIELDS = ("verdict", "raw_output", "reason", "latency_ms", "prompt_tokens", "completion_tokens", "attempts")


@transaction.atomic
def verdicts_record(*, run: CalibrationRun, outcomes: list[Outcome]) -> int:
    """Write a batch of item verdicts in one transaction, each item exactly once: an existing final verdict
    wins (another worker got there first), an `error` row is replaced. Returns how many rows were written."""
    if not outcomes:
        return 0
    existing = {v.item_id: v for v in Verdict.objects.select_for_update().filter(run=run, item_id__in=[o.key for o in outcomes])}
    fresh, replaced = [], []
    for outcome in outcomes:
        fields = _verdict_fields(outcome)
        row = existing.get(outcome.key)
        if row is None:
            fresh.append(Verdict(run=run, item_id=outcome.key, **fields))
        elif row.verdict not in FINAL_VERDICTS:
            for key, value in fields.items():
                setattr(row, key, value)
            replaced.append(row)
    # ignore_conflicts: a row another worker inserted since our read stands, and ours is dropped.
    Verdict.objects.bulk_create(fresh, ignore_conflicts=True)
    if replaced:
        Verdict.objects.bulk_update(replaced, list(VERDICT_FIELDS))
    return len(fresh) + len(replaced)


def verdict_record(*, run: CalibrationRun, item_id: int, outcome: Outcome) -> Verdict:
    """Write one item's verdict exactly once (see verdicts_record) and return the row that stands."""
    verdicts_record(run=run, outcomes=[Outcome(item_id, outcome.result, outcome.error, outcome.attempts, outcome.transient)])
    return Verdict.objects.get(run=run, item_id=item_id)


def _still_running(run_pk: int) -> bool:
    return CalibrationRun.objects.filter(pk=run_pk, status__in=("queued", "running")).exists()


def calibration_chunk_judge(*, run_id: int, item_ids: list[int]) -> dict:
    """Judge one chunk of a run's items (the body of the chunk task). Idempotent: items with a final
    verdict are skipped; verdicts are written in small batches as they come; a cancel stops the chunk.

    Raises TransientJudgeError when some items still failed transiently after their in-process retries
    (429, 5xx, timeouts): those items stay pending and the task retries the chunk later with backoff.
    """
    from calibration.backends import TransientJudgeError

    run = CalibrationRun.objects.select_related("judge_version").filter(pk=run_id).first()
    if run is None or run.status not in ("queued", "running"):
        return {"skipped": len(item_ids), "reason": "run is not active"}
    done = set(Verdict.objects.filter(run=run, item_id__in=item_ids, verdict__in=FINAL_VERDICTS)
               .values_list("item_id", flat=True))
    todo = [i for i in item_ids if i not in done]
    now = timezone.now()
    CalibrationRun.objects.filter(pk=run.pk, status="queued").update(status="running", started_at=now)
    CalibrationRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=now)
    CalibrationRun.objects.filter(pk=run.pk).update(heartbeat_at=now)
    if not todo:
        return {"judged": 0, "skipped": len(item_ids)}
    items = list(SampleItem.objects.filter(pk__in=todo).select_related("answer__run__dataset").order_by("position"))
    questions = question_records([i.answer for i in items])
    version = run.judge_version
    params = version.params or {}
    backend = backend_for(version.backend, model=version.model, prompt_template=version.prompt_template,
                          params=params, judge_version_id=version.pk, rubric=version.rubric)
    broker = getattr(settings, "CELERY_BROKER_URL", "") or ""
    limiter = limiter_for(version.config_hash + str(params.get("base_url", "")), params.get("rate_limit"),
                          redis_url=broker if broker.startswith(("redis://", "rediss://")) else None)
    retry = RetryPolicy(attempts=int(params.get("max_attempts", 4)))
    counts = {"judged": 0, "errors": 0, "transient": 0}
    last_check = [time.monotonic()]
    stop = threading.Event()  # judge threads read it; only this thread touches the database

    buffer: list[Outcome] = []
    last_flush = [time.monotonic()]

    def flush() -> None:
        verdicts_record(run=run, outcomes=buffer)
        buffer.clear()
        last_flush[0] = time.monotonic()

    def on_outcome(outcome: Outcome) -> None:
        if outcome.error == "cancelled":
            return
        if outcome.result is None and outcome.transient:
            counts["transient"] += 1
        else:
            buffer.append(outcome)
            counts["judged" if outcome.result else "errors"] += 1
        # Verdicts are written in small batches: one transaction per item would cost more than the judging
        # on a fast judge; a worker killed now loses at most this batch, which the resume judges again.
        if len(buffer) >= VERDICT_BATCH or time.monotonic() - last_flush[0] > 0.5:
            flush()
        on_tick()

    def on_tick() -> None:
        if time.monotonic() - last_check[0] > 1.0:
            last_check[0] = time.monotonic()
            if buffer and time.monotonic() - last_flush[0] > 0.5:
                flush()
            CalibrationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
            if not _still_running(run.pk):
                stop.set()

    if not _still_running(run.pk):
        return {"skipped": len(item_ids), "reason": "run is not active"}
    try:
        judge_items(backend, [(i.pk, _judge_item(i, questions)) for i in items],
                    concurrency=int(params.get("concurrency", 8)), retry=retry, limiter=limiter,
                    on_outcome=on_outcome, should_stop=stop.is_set, on_tick=on_tick)
    finally:
        backend.close()
        flush()
    CalibrationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    if counts["transient"]:
        raise TransientJudgeError(f"{counts['transient']} item(s) of the chunk could not reach the judge")
    return counts


def pending_among(run_id: int, item_ids: list[int]) -> list[int]:
    """The items of this list that have no final verdict in the run."""
    done = set(Verdict.objects.filter(run_id=run_id, item_id__in=item_ids, verdict__in=FINAL_VERDICTS)
               .values_list("item_id", flat=True))
    return [i for i in item_ids if i not in done]


def calibration_chunk_give_up(*, run_id: int, item_ids: list[int], error: str) -> None:
    """After the last retry: the chunk's pending items become `error` verdicts so the run can close."""
    run = CalibrationRun.objects.filter(pk=run_id).first()
    if run is None:
        return
    verdicts_record(run=run, outcomes=[Outcome(i, None, error or "gave up", 0, True) for i in item_ids])


@transaction.atomic
def calibration_close(*, run_id: int) -> CalibrationRun | None:
    """Close a run once every item has a verdict: measure agreement (or fail when items errored).

    Idempotent and safe to call from every chunk task and from a chord: the run row is locked and a
    closed run is left alone; a run with items still pending is left running.
    """
    run = CalibrationRun.objects.select_for_update().select_related("judge_version", "sample").filter(pk=run_id).first()
    if run is None or run.status not in ("queued", "running"):
        return run
    verdicts = list(Verdict.objects.filter(run=run).select_related("item__answer"))
    if len(verdicts) < run.total:
        return run
    errors = [v for v in verdicts if v.verdict == "error"]
    now = timezone.now()
    if errors:
        run.status, run.finished_at = "failed", now
        run.message = (f"{len(errors)} of {run.total} item(s) could not be judged (e.g. {errors[0].reason[:200]}); "
                       "resume the run to try them again")
        run.save(update_fields=["status", "finished_at", "message"])
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
    Measurement.objects.create(
        judge_version=run.judge_version, run=run, n=ag.n, labels=list(ag.labels),
        confusion=[list(r) for r in ag.confusion], strata={s: t.tolist() for s, t in tables.items()},
        bootstrap_ci95=ci, invalid=invalid, excluded=excluded, dataset_hash=run.sample.dataset_hash, measured_at=now)
    run.status, run.finished_at, run.message = "done", now, ""
    run.save(update_fields=["status", "finished_at", "message"])
    return run


# --- grading ------------------------------------------------------------------------------------

@transaction.atomic
def grading_start(*, judge_version_id, run_id: str, force: bool = False, reason: str = "", user=None,
                  run_now: bool = False) -> GradingRun:
    """Grade a system run's answers with a judge version. Refused (exit 1 / HTTP 409) unless the version's
    gate is `pass`, or `force` is given with a reason; a forced grading records who, why and the gate.

    With run_now the answers are graded in this process; otherwise a Celery task does it on commit.
    """
    raise_problems("bad grading options", text_problem(reason or "", "reason", max_length=TEXT_MAX))
    version = judge_version_get(judge_version_id)
    run = run_get(run_id)
    gate = judge_gate(version)
    policies.check_can_grade(gate_status=gate["status"], force=force, reason=reason)
    grading = GradingRun.objects.create(
        judge_version=version, run=run, gate_status=gate["status"], gate=gate,
        forced=gate["status"] != "pass", forced_by=user if gate["status"] != "pass" else None,
        force_reason=reason if gate["status"] != "pass" else "", total=run.answers.count())
    if run_now:
        transaction.on_commit(lambda: grading_execute(grading_id=grading.pk))
    else:
        from calibration import tasks

        transaction.on_commit(lambda: tasks.grade_run.delay(grading.pk))
    return grading


def grading_execute(*, grading_id: int, batch: int | None = None, budget_seconds: float | None = None) -> dict:
    """Grade the answers of a grading run that have no verdict yet (idempotent), then mark it done when none
    is left. With `batch` and `budget_seconds` (the Celery task) at most that many answers, for about that
    long, so a task stays well inside its time limit; returns {"graded", "remaining"} to say whether to go on."""
    grading = GradingRun.objects.select_related("judge_version", "run").filter(pk=grading_id).first()
    if grading is None or grading.status in ("done", "cancelled"):
        return {"graded": 0, "remaining": 0}
    version = grading.judge_version
    pending = (Answer.objects.filter(run=grading.run)
               .exclude(pk__in=GradedAnswer.objects.filter(grading=grading).values("answer_id")).order_by("pk"))
    todo = pending.select_related("run__dataset")
    answers = list(todo[:batch] if batch else todo)
    questions = question_records(answers)
    backend = backend_for(version.backend, model=version.model, prompt_template=version.prompt_template,
                          params=version.params, judge_version_id=version.pk, rubric=version.rubric)
    GradingRun.objects.filter(pk=grading.pk, status__in=ACTIVE_STATUSES).update(status="running",
                                                                                heartbeat_at=timezone.now())
    deadline = time.monotonic() + budget_seconds if budget_seconds else None
    last_beat = [time.monotonic()]
    graded = [0]

    def item_for(answer):
        record = questions.get(answer.pk) or {}
        return JudgeItem(run_id=answer.run.run_id, qid=answer.qid, question=record.get("question") or "",
                         answer=answer.answer, expected=record.get("expected"), gold_text=record.get("gold_text"))

    def beat() -> None:
        if time.monotonic() - last_beat[0] > 1.0:
            last_beat[0] = time.monotonic()
            GradingRun.objects.filter(pk=grading.pk).update(heartbeat_at=timezone.now())

    def on_outcome(outcome: Outcome) -> None:
        result = outcome.result
        if result is None and outcome.error == "cancelled":
            return  # out of time: left for the next task
        GradedAnswer.objects.get_or_create(grading=grading, answer_id=outcome.key, defaults={
            "verdict": result.verdict if result else "error", "raw_output": result.raw_output if result else outcome.error,
            "latency_ms": result.latency_ms if result else None})
        graded[0] += 1
        beat()

    try:
        judge_items(backend, [(a.pk, item_for(a)) for a in answers],
                    concurrency=int(version.params.get("concurrency", 8)),
                    retry=RetryPolicy(attempts=int(version.params.get("max_attempts", 4))), on_outcome=on_outcome,
                    # Out of time only once something was graded, so every task moves the grading on.
                    should_stop=(lambda: graded[0] > 0 and time.monotonic() > deadline) if deadline else None,
                    on_tick=beat)
    finally:
        backend.close()
    remaining = pending.count()
    if remaining == 0:
        GradingRun.objects.filter(pk=grading.pk, status__in=ACTIVE_STATUSES).update(status="done",
                                                                                    finished_at=timezone.now())
    else:
        GradingRun.objects.filter(pk=grading.pk).update(heartbeat_at=timezone.now())
    return {"graded": graded[0], "remaining": remaining}
