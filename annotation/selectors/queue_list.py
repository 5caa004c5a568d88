"""The queues a person works in or manages, with the progress figures of the queue list, in a handful of
grouped statements however many queues and items there are."""

from typing import Any

from django.db.models import Count, Q

from annotation import policies
from annotation.models import Assignment, Queue, QueueItem, QueueMember
from annotation.selectors.adjudication import adjudicable_items
from annotation.selectors.blind import blind_scope
from evalapp.roles import user_roles


def queues_for_user(user) -> list[dict]:
    """The queues this user works in (pool member) or manages, with progress for the bars.

    Every figure comes from a grouped query over all the listed queues, so the list costs the same
    handful of statements however many queues and items there are."""
    roles = user_roles(user)
    queues = list(
        (Queue.objects.all() if policies.can_manage_queues(roles=roles) else Queue.objects.filter(members__user=user))
        .distinct()
        .order_by("-created_at", "-id")
    )
    ids = [q.pk for q in queues]
    scope = blind_scope(user)
    member = set(QueueMember.objects.filter(queue_id__in=ids, user=user).values_list("queue_id", flat=True))
    counts = {
        row["queue_id"]: row
        for row in QueueItem.objects.filter(queue_id__in=ids)
        .values("queue_id")
        .annotate(
            items=Count("id"),
            complete=Count("id", filter=~Q(status=QueueItem.OPEN)),
            disputed=Count("id", filter=Q(status=QueueItem.DISPUTED)),
        )
        .order_by()
    }
    mine = dict(
        Assignment.objects.filter(queue_id__in=ids, annotator=user, state=Assignment.DONE)
        .values("queue_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("queue_id", "n")
    )
    settled = Assignment.objects.filter(
        annotator=user, state__in=[Assignment.DONE, Assignment.SKIPPED], queue_id__in=member
    ).values("item_id")
    left = dict(
        QueueItem.objects.filter(queue_id__in=member, status=QueueItem.OPEN)
        .exclude(pk__in=settled)
        .values("queue_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("queue_id", "n")
    )
    settle = dict(
        adjudicable_items(ids, user, roles=roles, scope=scope)
        .values("queue_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("queue_id", "n")
    )
    out = []
    for queue in queues:
        c: Any = counts.get(queue.pk, {})
        items, complete, disputed = c.get("items", 0), c.get("complete", 0), c.get("disputed", 0)
        n_mine = mine.get(queue.pk, 0)
        out.append(
            {
                "queue": queue,
                "member": queue.pk in member,
                "items": items,
                "complete": complete,
                "pct_complete": round(100 * complete / items) if items else 0,
                "mine": n_mine,
                "left": left.get(queue.pk, 0),
                "disputed": disputed,
                # What this user may settle: not the disputed items they labelled themselves.
                "to_adjudicate": settle.get(queue.pk, 0) if disputed else 0,
                # An annotator can label each item once; at most `items` are theirs to do.
                "pct_mine": round(100 * n_mine / items) if items else 0,
            }
        )
    return out
