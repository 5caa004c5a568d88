"""The viewer's blind scope: which answers, runs and labels blindness hides from a person, worked out
once per request from the open queue items whose pool holds them (annotation.policies)."""

from dataclasses import dataclass, field
from functools import cached_property

from django.db.models import QuerySet

from annotation import policies
from annotation.models import (
    Answer,
    QueueItem,
)
from evalapp.roles import ROLES, user_roles
from evalapp.routers import read_primary


@dataclass(frozen=True)
class BlindScope:
    """What one person must not see right now (annotation.policies, "Blindness that holds for the person").

    `run_ids`: pks of the runs with an answer on an open item of a queue whose pool holds the user, with
    `where` naming one such run and queue for the refusal message. `answer_ids` (those answers) is read
    only when a path needs it; `answer_ids_query()` is the same set as a subquery for ORM filters.
    `user_id` None is the operator (commands): blind to nothing, every role.
    """

    user_id: int | None
    roles: frozenset[str]
    run_ids: frozenset[int] = frozenset()
    where: dict[int, tuple[str, str]] = field(default_factory=dict)  # run pk -> (run_id, queue name)

    def _open_items(self) -> QuerySet:
        return QueueItem.objects.filter(status=QueueItem.OPEN, queue__members__user_id=self.user_id)

    def answer_ids_query(self) -> QuerySet:
        """The blind answer ids as a subquery (nothing when there is no blind run)."""
        if self.user_id is None or not self.run_ids:
            return Answer.objects.none().values("pk")
        return self._open_items().values("answer_id")

    @cached_property
    def answer_ids(self) -> frozenset[int]:
        if self.user_id is None or not self.run_ids:
            return frozenset()
        return frozenset(self._open_items().values_list("answer_id", flat=True))

    @property
    def blind(self) -> bool:
        return bool(self.run_ids)

    def can_read_run(self, run_pk: int) -> bool:
        return policies.can_read_run(roles=self.roles, run_id=run_pk, blind_run_ids=self.run_ids)

    def check_run(self, run) -> None:
        """PermissionDenied (403) unless the viewer may read this run's results."""
        name, queue = self.where.get(run.pk, (run.run_id, ""))
        policies.check_can_read_run(
            roles=self.roles, run_id=run.pk, blind_run_ids=self.run_ids, run_name=name, queue_name=queue
        )

    def can_read_answer(self, answer_id: int, run_pk: int, *, shows_run: bool) -> bool:
        if not self.run_ids:
            return True
        return policies.can_read_answer(
            answer_id=answer_id,
            run_id=run_pk,
            blind_answer_ids=self.answer_ids,
            blind_run_ids=self.run_ids,
            shows_run=shows_run,
        )


OPERATOR = BlindScope(user_id=None, roles=frozenset(ROLES))


def blind_scope(user) -> BlindScope:
    """The viewer's blind scope, in one query: the runs (with one queue each, for the message) that have an
    answer on an open item of a queue whose pool holds the user. Compute it once per request."""
    if user is None or not user.is_authenticated:
        return BlindScope(user_id=None, roles=frozenset())
    # Unordered, so the database reaches the open items through the queue's status index instead of
    # walking every item in queue order; the queue with the lowest id names each run.
    rows = sorted(
        QueueItem.objects.filter(status=QueueItem.OPEN, queue__members__user_id=user.pk)
        .order_by()
        .values_list("queue_id", "answer__run_id", "answer__run__run_id", "queue__name")
        .distinct()
    )
    where: dict[int, tuple[str, str]] = {}
    for _queue_id, run_pk, run_id, queue_name in rows:
        where.setdefault(run_pk, (run_id, queue_name))
    if where:
        # The scope's answers are filtered by subqueries of the page's own queries: on a replica a moment
        # behind they could miss an item just opened. A blind viewer's page reads the primary (evalapp.routers).
        read_primary()
    return BlindScope(user_id=user.pk, roles=frozenset(user_roles(user)), run_ids=frozenset(where), where=where)
