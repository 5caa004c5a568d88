"""Human labels on answers: one written in the app, an adjudication, and the final label kept in step."""

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Answer,
    HumanLabel,
    LabelEvent,
    Queue,
    QueueItem,
)
from evalapp.bulk import update_ids
from evalapp.errors import Problem, ServiceError
from evalapp.keyset import ids_in
from evalapp.roles import ANNOTATOR
from evalapp.validation import TEXT_MAX, raise_problems, seconds_problem, text_problem

VERDICT_VALUES = ("correct", "incorrect")


USERNAME_MAX = 150


# Answers refreshed per round of statements: the round's reads hold this many answers' rows in memory.
REFRESH_CHUNK = 50_000


def final_label_refresh(*, answer_ids) -> int:
    """Recompute the denormalised final label of answers: the latest adjudication, else the verdict
    all its annotators agree on once it has the labels it needs, else none. Returns how many changed.

    An answer in labelling queues needs the largest overlap among them (two for the usual blind
    double annotation, so one label alone is work in progress); an answer in no queue needs one label,
    so a team that grades each answer once (and imports those labels) can calibrate. A second label
    that disagrees withdraws the final label until an adjudicator settles it; a judge measured on
    the earlier label then shows as stale, because its calibration labels changed.

    Set-based: a fixed handful of statements per REFRESH_CHUNK answers, never one per answer."""
    ids = sorted(set(answer_ids))
    now = timezone.now()
    return sum(
        _finals_refresh(Answer.objects.filter(pk__in=ids_in(ids[start : start + REFRESH_CHUNK])), now)
        for start in range(0, len(ids), REFRESH_CHUNK)
    )


def final_labels_refresh_where(*, answers: QuerySet[Answer]) -> int:
    """`final_label_refresh` over the answers a query names (a queue's, say), in the same fixed handful of
    statements however many there are. Returns how many changed."""
    return _finals_refresh(answers, timezone.now())


def _finals_refresh(answers: QuerySet[Answer], now) -> int:
    """Four reads (answers locked, the labels each needs, the latest adjudication, the labels' tally),
    the rule applied in Python, and an UPDATE per outcome for the answers whose final label changed."""
    scope = answers.order_by().values("pk")
    current = {
        pk: (verdict, source)
        for pk, verdict, source in Answer.objects.filter(pk__in=scope)
        .order_by("pk")
        .select_for_update(of=("self",))
        .values_list("pk", "final_verdict", "final_source")
    }
    if not current:
        return 0
    needs = dict(
        QueueItem.objects.filter(answer_id__in=scope, queue__kind=Queue.KIND_LABELLING)
        .order_by()
        .values("answer_id")
        .annotate(n=Max("queue__overlap"))
        .values_list("answer_id", "n")
    )
    # In time order, so the last one kept per answer is the latest decision (as `-at, -id` would pick).
    adjudicated = dict(
        Adjudication.objects.filter(answer_id__in=scope).order_by("at", "id").values_list("answer_id", "verdict")
    )
    tallies = {
        answer_id: (n, lowest, highest)
        for answer_id, n, lowest, highest in HumanLabel.objects.filter(answer_id__in=scope)
        .order_by()
        .values("answer_id")
        .annotate(n=Count("id"), lowest=Min("verdict"), highest=Max("verdict"))
        .values_list("answer_id", "n", "lowest", "highest")
    }
    changes: dict[tuple[str, str], list[int]] = {}
    for pk, was in current.items():
        final = _final(adjudicated.get(pk), needs.get(pk), *tallies.get(pk, (0, "", "")))
        if final != was:
            changes.setdefault(final, []).append(pk)
    # One statement per outcome (at most seven: two verdicts by three sources, and none), whatever the count.
    return sum(
        update_ids(Answer, ids, {"final_verdict": verdict, "final_source": source, "final_changed_at": now})
        for (verdict, source), ids in sorted(changes.items())
    )


def _final(adjudicated: str | None, needs: int | None, n: int, lowest: str, highest: str) -> tuple[str, str]:
    """(verdict, source) of an answer's final label from its latest adjudication, the labels it needs
    (None: in no labelling queue, so one) and the tally of its labels."""
    if adjudicated is not None:
        return adjudicated, "adjudication"
    if n and n >= (needs or 1) and lowest == highest:
        return lowest, "agreement" if n >= 2 else "single"
    return "", ""


def _final_inputs(answer_id: int) -> tuple[int | None, str | None, int, str | None, str | None]:
    """(labels needed, latest adjudication, labels, lowest and highest verdict) of one answer in one statement,
    as `_finals_refresh` reads them for many: written as SQL because a submit that completes an item makes it,
    and composing its four subqueries with the ORM cost more CPU (1.3 ms) than the database spent on them."""
    qi, q, adj, hl = (m._meta.db_table for m in (QueueItem, Queue, Adjudication, HumanLabel))
    sql = (
        f"SELECT (SELECT MAX(q.overlap) FROM {qi} qi JOIN {q} q ON q.id = qi.queue_id"
        f" WHERE qi.answer_id = %s AND q.kind = %s),"
        f" (SELECT verdict FROM {adj} WHERE answer_id = %s ORDER BY at DESC, id DESC LIMIT 1),"
        f" COUNT(*), MIN(verdict), MAX(verdict) FROM {hl} WHERE answer_id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [answer_id, Queue.KIND_LABELLING, answer_id, answer_id])
        needs, adjudicated, n, lowest, highest = cursor.fetchone()
    return needs, adjudicated, n, lowest, highest


def answer_final_refresh(*, answer: Answer) -> bool:
    """final_label_refresh for one answer whose row the caller locked and read under that lock (a submit
    that completes an item): the rule's three reads in one statement, and the update only on a change.
    Returns whether the final label changed (the instance is updated too)."""
    needs, adjudicated, n, lowest, highest = _final_inputs(answer.pk)
    final = _final(adjudicated, needs, n or 0, lowest or "", highest or "")
    if final == (answer.final_verdict, answer.final_source):
        return False
    now = timezone.now()
    Answer.objects.filter(pk=answer.pk).update(final_verdict=final[0], final_source=final[1], final_changed_at=now)
    answer.final_verdict, answer.final_source, answer.final_changed_at = final[0], final[1], now
    return True


def annotator_get_or_create(username: str):
    """The user by name; unknown annotators named in an import are created (no password, annotator role)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    return user


def label_record(
    *,
    answer: Answer,
    annotator,
    label: HumanLabel | None,
    verdict: str,
    rationale: str = "",
    source: str = "app",
    labelled_at: datetime | None = None,
    active_seconds: float | None = None,
    round: int = 1,
    reason: str = "",
    by=None,
) -> tuple[HumanLabel, str]:
    """label_write's writes in the caller's transaction, for a verdict and rationale already checked: `label`
    is the annotator's current label on the answer as read under a lock, or None when they have none (then a
    label made meanwhile by someone else's transaction fails the unique constraint, nothing is overwritten).
    The label and its LabelEvent; the final label is the caller's to refresh."""
    labelled_at = labelled_at or timezone.now()
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
        reason=reason if outcome == "changed" else "",
        by=by if outcome == "changed" else None,
    )
    return label, outcome


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
    reason: str = "",
    by=None,
) -> tuple[HumanLabel, str]:
    """Write an annotator's verdict on an answer; a change keeps the old verdict in LabelEvent, with
    `reason` and `by` when someone other than the annotator replaces it (an import with --replace).

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
    label = HumanLabel.objects.select_for_update().filter(answer=answer, annotator=annotator).first()
    label, outcome = label_record(
        answer=answer,
        annotator=annotator,
        label=label,
        verdict=verdict,
        rationale=rationale,
        source=source,
        labelled_at=labelled_at,
        active_seconds=active_seconds,
        round=round,
        reason=reason,
        by=by,
    )
    if refresh_final and outcome != "unchanged":
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
