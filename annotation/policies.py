"""Pure permission rules of annotation (queues, and the labels an import may write), in pairs: can_x(...) -> bool,
check_can_x(...) raises.

They take plain facts (role names, user ids, counts), never query: selectors and services gather
the facts and ask here, so the API and the pages cannot drift apart.
"""

from collections.abc import Set

from django.core.exceptions import PermissionDenied

from evalapp.errors import Problem, ServiceError
from evalapp.roles import ADJUDICATOR, ANNOTATOR, ENGINEER

QUEUE_MANAGERS = (ENGINEER, ADJUDICATOR)


def can_manage_queues(*, roles: set[str]) -> bool:
    """Engineers and adjudicators create queues and read their statistics."""
    return bool(set(roles) & set(QUEUE_MANAGERS))


def check_can_manage_queues(*, roles: set[str]) -> None:
    if not can_manage_queues(roles=roles):
        raise PermissionDenied("Creating queues and reading their statistics needs the engineer or adjudicator role.")


def can_label(*, user_id: int, pool_ids: set[int]) -> bool:
    """Only annotators in the queue's pool are handed its items."""
    return user_id in pool_ids


def check_can_label(*, user_id: int, pool_ids: set[int]) -> None:
    if not can_label(user_id=user_id, pool_ids=pool_ids):
        raise PermissionDenied("You are not in this queue's annotator pool.")


def can_view_item(*, user_id: int, roles: set[str], pool_ids: set[int]) -> bool:
    """Pool members, engineers and adjudicators may open an item (what they see is the next rule's)."""
    return user_id in pool_ids or can_manage_queues(roles=roles)


def check_can_view_item(*, user_id: int, roles: set[str], pool_ids: set[int]) -> None:
    if not can_view_item(user_id=user_id, roles=roles, pool_ids=pool_ids):
        raise PermissionDenied("You are not in this queue's annotator pool.")


def can_see_labels(*, labels_in: int, overlap: int) -> bool:
    """An annotator never sees another annotator's label on an item before all of its labels are in.

    Nobody does, in the queue's own answers: an engineer who peeks could tell an annotator, and the
    statistics need complete items only.
    """
    return labels_in >= overlap


def check_can_see_labels(*, labels_in: int, overlap: int) -> None:
    if not can_see_labels(labels_in=labels_in, overlap=overlap):
        raise PermissionDenied("Other labels on this item are hidden until all of its labels are in.")


def can_adjudicate(*, user_id: int, roles: set[str], annotator_ids: set[int]) -> bool:
    """An adjudicator is never one of the annotators of the item."""
    return ADJUDICATOR in roles and user_id not in annotator_ids


def check_can_adjudicate(*, user_id: int, roles: set[str], annotator_ids: set[int]) -> None:
    if ADJUDICATOR not in roles:
        raise PermissionDenied("Adjudicating needs the adjudicator role.")
    if user_id in annotator_ids:
        raise PermissionDenied("You labelled this item, so you cannot adjudicate it; another adjudicator must.")


def can_audit(*, user_id: int, original_annotator_ids: set[int]) -> bool:
    """A relabel auditor is never the annotator whose changes are audited."""
    return user_id not in original_annotator_ids


def check_can_audit(*, user_id: int, original_annotator_ids: set[int], username: str = "") -> None:
    if not can_audit(user_id=user_id, original_annotator_ids=original_annotator_ids):
        raise ServiceError(f"{username or 'this user'} made labels in the audited batch and cannot audit them blind")


def can_hold_label(*, roles: set[str]) -> bool:
    """Only annotators hold labels, imported or made in a queue (the rule of every queue's pool)."""
    return ANNOTATOR in roles


def check_can_hold_label(*, roles: set[str], username: str) -> None:
    if not can_hold_label(roles=roles):
        raise ServiceError(
            f"user {username!r} does not hold the annotator role; labels are held by annotators only "
            f"(add_user {username} --role annotator …)"
        )


def can_import_label(*, queues: list[tuple[int, str, str]], label_source: str | None) -> bool:
    """An import never writes on an answer in a labelling or audit queue, nor over a label made in a queue:
    those labels are made blind, in the queue, and settled there."""
    return not queues and label_source != "queue"


def check_can_import_label(
    *, queues: list[tuple[int, str, str]], label_source: str | None, answer: str, annotator: str
) -> None:
    """`queues` are (id, name, kind) of the queues that hold the answer."""
    if queues:
        where = " and ".join(f"{kind} queue {name!r} (id {pk})" for pk, name, kind in sorted(queues))
        raise ServiceError(f"answer {answer} is in {where}; its labels are made there, not imported")
    if label_source == "queue":
        raise ServiceError(
            f"the label by {annotator!r} on {answer} was made in a labelling queue; it is changed there, not imported"
        )


def can_replace_label(*, replace: bool, reason: str) -> bool:
    """A label someone made is replaced only on purpose: an explicit replace with a recorded reason."""
    return replace and bool(reason.strip())


def check_can_replace_label(
    *, replace: bool, reason: str, annotator: str, answer: str, old: str, new: str, rationale_only: bool
) -> None:
    if can_replace_label(replace=replace, reason=reason):
        return
    if rationale_only:
        said = f"labelled {answer} {old!r} with another rationale and this line says {new!r} with a new one"
    else:
        said = f"labelled {answer} {old!r} and this line says {new!r}"
    raise ServiceError(
        f"{annotator!r} {said}; pass --replace with --reason (API: replace=true and reason) to replace it"
    )


def can_join_pool(*, roles: set[str]) -> bool:
    """Only annotators are put in a queue's annotator pool: the pool is who grades blind (the same rule as
    can_hold_label: whoever grades in a pool holds labels)."""
    return can_hold_label(roles=roles)


def check_can_join_pool(*, roles: set[str], username: str = "", field: str | None = None) -> None:
    if not can_join_pool(roles=roles):
        raise ServiceError(
            f"{username or 'this user'} does not hold the annotator role; only annotators can be in "
            "a queue's annotator pool",
            [Problem(f"{username or 'this user'} is not an annotator", field=field)],
        )


# Blindness that holds for the person, whatever else they may read.
#
# A user's blind scope is every answer on an *open* item of any queue (labelling or audit) whose pool
# holds them, and the runs of those answers (annotation.selectors.blind.blind_scope). While an answer is in it,
# the user must learn nothing that would sway their label: another person's label or rationale, the
# harness score, the final verdict, a judge verdict, or which run or system produced it.
#
# Why the whole run: hiding only the answer leaks it by absence (run R's answer list lacks qid Q, so
# R wrote the answer to Q being graded) and by subtraction (R's score over n minus the n-1 visible
# scores). So per-answer reads of a blind run (answers, scores, labels, verdicts, failures, compares,
# series points, the run page) are refused or left out; a run listing may still name it (that it
# exists is no secret) but marks it blind and withholds every outcome. Reads of answers that do not
# show the run (queue statistics, adjudication) drop the blind answers themselves. Blindness lifts by
# itself when the items complete. Commands run as the operator and have no blind scope.


def can_read_run(*, roles: Set[str], run_id: int, blind_run_ids: Set[int]) -> bool:
    """Engineers read a run's results (answers, scores, labels, verdicts, comparisons), unless it is in
    their blind scope: they label one of its answers blind in an open queue item."""
    return ENGINEER in roles and run_id not in blind_run_ids


def check_can_read_run(
    *, roles: Set[str], run_id: int, blind_run_ids: Set[int], run_name: str = "", queue_name: str = ""
) -> None:
    if ENGINEER not in roles:
        raise PermissionDenied("Reading runs, their answers and scores needs the engineer role.")
    if not can_read_run(roles=roles, run_id=run_id, blind_run_ids=blind_run_ids):
        where = f" in queue {queue_name!r}" if queue_name else ""
        raise PermissionDenied(
            f"you are labelling answers of run {run_name or run_id!r} blind{where}; its results "
            "are hidden from you until those items are complete"
        )


def can_read_answer(
    *, answer_id: int, run_id: int, blind_answer_ids: Set[int], blind_run_ids: Set[int], shows_run: bool
) -> bool:
    """An answer (its labels, scores, verdicts) is hidden while it is in the viewer's blind scope; where the
    read also names its run or system, every answer of a blind run is hidden too (absence and subtraction)."""
    if answer_id in blind_answer_ids:
        return False
    return not (shows_run and run_id in blind_run_ids)


def check_can_read_answer(
    *, answer_id: int, run_id: int, blind_answer_ids: Set[int], blind_run_ids: Set[int], shows_run: bool
) -> None:
    if not can_read_answer(
        answer_id=answer_id,
        run_id=run_id,
        blind_answer_ids=blind_answer_ids,
        blind_run_ids=blind_run_ids,
        shows_run=shows_run,
    ):
        raise PermissionDenied(
            "you are labelling this answer (or another of its run) blind; its labels and "
            "verdicts are hidden from you until those items are complete"
        )


def can_list_disputes(*, roles: Set[str]) -> bool:
    """Adjudicators read the adjudication list (disputed answers with their labels, never their runs)."""
    return ADJUDICATOR in roles


def check_can_list_disputes(*, roles: Set[str]) -> None:
    if not can_list_disputes(roles=roles):
        raise PermissionDenied("The adjudication list needs the adjudicator role.")


def can_read_import_job(*, user_id: int, is_staff: bool, owner_id: int) -> bool:
    """An import job (its upload's name, its result, its errors) is seen by the user who started it, and staff."""
    return is_staff or user_id == owner_id


def check_can_read_import_job(*, user_id: int, is_staff: bool, owner_id: int, job_id: int) -> None:
    # Not found rather than forbidden: whether another user's job exists is not the caller's to know.
    if not can_read_import_job(user_id=user_id, is_staff=is_staff, owner_id=owner_id):
        raise ServiceError(f"unknown import job {job_id}", status=404)
