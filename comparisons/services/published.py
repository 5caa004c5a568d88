"""Recording a published figure, and a correction beside it once a later population makes it
non-comparable. Nothing is ever overwritten: a figure keeps the value shown, a correction is added."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.models import Correction, PublishedFigure
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import latest_version
from annotation.selectors.runs import run_get
from calibration.selectors.grades import run_grades
from comparisons.selectors.published import published_figures
from comparisons.selectors.series import rescore_on_version
from evalapp.errors import NotFound, Problem, ServiceError


def figure_publish(
    *,
    run_id: str,
    shown_to: str,
    shown_at: datetime | None = None,
    note: str = "",
    user=None,
    scope: BlindScope = OPERATOR,
) -> dict:
    """Record that the run's score was shown to `shown_to` (the score, n and hashes as they are now).
    Refused, writing nothing: an unknown run (404), an empty `shown_to`, a run with no dataset hash or no
    scored answer yet (400)."""
    problems = []
    if not shown_to.strip():
        problems.append(Problem("say to whom the figure was shown", field="shown_to"))
    run = run_get(run_id, scope=scope)
    if not run.dataset_hash:
        problems.append(Problem(f"run {run_id!r} records no dataset hash, so its population is unknown", field="run"))
    grades = run_grades(run)
    score = grades.score()
    if score is None:
        problems.append(Problem(f"run {run_id!r} has no scored answer yet", field="run"))
    if problems or score is None:
        raise ServiceError("the figure cannot be published", problems)
    figure = PublishedFigure.objects.create(
        run=run,
        score=score,
        n=grades.n_scored,
        dataset_hash=run.dataset_hash,
        evaluator_config_hash=run.evaluator_config_hash,
        shown_to=shown_to.strip(),
        shown_at=shown_at or timezone.now(),
        note=note,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    return figure_status(figure.pk)


def figure_status(figure_id: int, *, scope: BlindScope = OPERATOR) -> dict:
    """One published figure as `published_figures` gives it, or NotFound (404); PermissionDenied (403)
    when its run is in the viewer's blind `scope`."""
    figure = PublishedFigure.objects.filter(pk=figure_id).select_related("run").first()
    if figure is None:
        raise NotFound(f"unknown published figure {figure_id}")
    scope.check_run(figure.run)
    return next(f for f in published_figures(run_ids=[figure.run.run_id]) if f["id"] == figure_id)


def figure_correct(*, figure_id: int, cause: str = "", user=None, scope: BlindScope = OPERATOR) -> dict:
    """Record the comparable figure beside a published one: the run re-scored on its dataset's latest
    version (null when it cannot be re-scored there, with the reason kept in the correction). `cause`
    defaults to what made the figure non-comparable. Refused, writing nothing: an unknown figure (404); a
    figure of a run in the viewer's blind `scope` (403); a figure still comparable without a `cause` (400)."""
    status = figure_status(figure_id, scope=scope)
    if status["comparable"] and not cause.strip():
        raise ServiceError(
            f"published figure {figure_id} is still comparable with the latest version: nothing to correct "
            f"(give a cause to record a correction anyway)",
            [Problem("no population change to correct for", field="cause")],
        )
    figure = PublishedFigure.objects.select_related("run", "run__dataset").get(pk=figure_id)
    latest = latest_version(figure.run.dataset) if figure.run.dataset is not None else None
    if latest is None:
        raise ServiceError(f"run {figure.run.run_id!r} has no dataset version to re-score on", code=2)
    rescored = rescore_on_version(figure.run, latest)
    unresolved = ""
    if not rescored["resolved"]:
        unresolved = (
            f"no comparable figure on v{latest.number}: {rescored['missing_answers']} of its questions the run did "
            f"not answer, {rescored['ungradable']} it cannot re-grade (human labels and verdicts given against "
            f"the old records)"
        )
    with transaction.atomic():
        Correction.objects.create(
            figure=figure,
            shown_score=figure.score,
            comparable_score=rescored["score"],
            comparable_n=rescored["n"],
            comparable_dataset_hash=latest.dataset_hash,
            cause=cause.strip() or "; ".join(status["causes"]),
            detail={"rescore": rescored, "unresolved": unresolved},
            created_by=user if user is not None and user.is_authenticated else None,
        )
    return figure_status(figure_id)
