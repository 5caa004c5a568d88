"""Human labels on answers: one written in the app, an adjudication, and the final label kept in step."""

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Answer,
    HumanLabel,
    LabelEvent,
    Queue,
    QueueItem,
)
from evalapp.errors import Problem, ServiceError
from evalapp.roles import ANNOTATOR
from evalapp.validation import TEXT_MAX, raise_problems, seconds_problem, text_problem

VERDICT_VALUES = ("correct", "incorrect")


USERNAME_MAX = 150


def final_label_refresh(*, answer_ids) -> int:
    """Recompute the denormalised final label of answers: the latest adjudication, else the verdict
    all its annotators agree on once it has the labels it needs, else none. Returns how many changed.

    An answer in labelling queues needs the largest overlap among them (two for the usual blind
    double annotation, so one label alone is work in progress); an answer in no queue needs one label,
    so a team that grades each answer once (and imports those labels) can calibrate. A second label
    that disagrees withdraws the final label until an adjudicator settles it; a judge measured on
    the earlier label then shows as stale, because its calibration labels changed."""
    changed = 0
    now = timezone.now()
    answer_ids = list(answer_ids)
    # Labels each answer needs: the largest overlap of its labelling queues, one query for them all.
    needs = dict(
        QueueItem.objects.filter(answer_id__in=answer_ids, queue__kind=Queue.KIND_LABELLING)
        .values("answer_id")
        .annotate(n=Max("queue__overlap"))
        .values_list("answer_id", "n")
    )
    for answer in Answer.objects.filter(pk__in=answer_ids).select_for_update():
        adjudication = Adjudication.objects.filter(answer=answer).order_by("-at", "-id").first()
        verdicts = list(HumanLabel.objects.filter(answer=answer).values_list("verdict", flat=True))
        needed = needs.get(answer.pk, 1)
        if adjudication is not None:
            final, source = adjudication.verdict, "adjudication"
        elif len(verdicts) >= needed and len(set(verdicts)) == 1:
            final, source = verdicts[0], ("agreement" if len(verdicts) >= 2 else "single")
        else:
            final, source = "", ""
        if (answer.final_verdict, answer.final_source) != (final, source):
            answer.final_verdict, answer.final_source, answer.final_changed_at = final, source, now
            answer.save(update_fields=["final_verdict", "final_source", "final_changed_at"])
            changed += 1
    return changed


def annotator_get_or_create(username: str):
    """The user by name; unknown annotators named in an import are created (no password, annotator role)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    return user


@transaction.atomic
def label_write(
    *,
    answer: Answer,
    annotator,
    verdict: str,
    rationale: str = "",
    source: str = "app",
    labelled_at: datetime | None = None,
    active_seconds: float | None = None,
    round: int = 1,
    refresh_final: bool = True,
) -> tuple[HumanLabel, str]:
    """Write an annotator's verdict on an answer; a change keeps the old verdict in LabelEvent.

    Returns (label, outcome) where outcome is "created", "changed" or "unchanged".
    """
    if verdict not in VERDICT_VALUES:
        raise ServiceError(
            f"verdict must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}",
            [Problem("unknown verdict", field="verdict")],
        )
    raise_problems(
        "the label is not valid; nothing was written",
        text_problem(rationale or "", "rationale", max_length=TEXT_MAX),
        seconds_problem(active_seconds),
    )
    labelled_at = labelled_at or timezone.now()
    label = HumanLabel.objects.select_for_update().filter(answer=answer, annotator=annotator).first()
    if label is not None and label.verdict == verdict and label.rationale == (rationale or label.rationale):
        return label, "unchanged"
    old = label.verdict if label else ""
    if label is None:
        label = HumanLabel.objects.create(
            answer=answer,
            annotator=annotator,
            verdict=verdict,
            rationale=rationale or "",
            source=source,
            labelled_at=labelled_at,
            active_seconds=active_seconds,
            round=round,
        )
        outcome = "created"
    else:
        label.verdict, label.rationale, label.source = verdict, rationale or label.rationale, source
        label.labelled_at, label.round = labelled_at, max(label.round, round)
        if active_seconds is not None:
            label.active_seconds = (label.active_seconds or 0) + active_seconds
        label.save()
        outcome = "changed"
    LabelEvent.objects.create(
        answer=answer,
        annotator=annotator,
        old_verdict=old,
        new_verdict=verdict,
        rationale=rationale or "",
        source=source,
        round=label.round,
    )
    if refresh_final:
        final_label_refresh(answer_ids=[answer.pk])
    return label, outcome


@transaction.atomic
def adjudication_record(*, answer: Answer, adjudicator, verdict: str, reason: str = "") -> Adjudication:
    """Record an adjudicator's final verdict; the policy that they are not one of the annotators is the caller's."""
    if verdict not in VERDICT_VALUES:
        raise ServiceError(
            f"verdict must be one of {', '.join(VERDICT_VALUES)}, not {verdict!r}",
            [Problem("unknown verdict", field="verdict")],
        )
    raise_problems(
        "the decision is not valid; nothing was written", text_problem(reason or "", "reason", max_length=TEXT_MAX)
    )
    adjudication = Adjudication.objects.create(answer=answer, adjudicator=adjudicator, verdict=verdict, reason=reason)
    final_label_refresh(answer_ids=[answer.pk])
    return adjudication
