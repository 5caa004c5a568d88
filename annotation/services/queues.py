"""Labelling queues: creating one over a system run's answers (all, chosen, or a stratified sample), its
rubric and its annotator pool."""

import hashlib
import random
import re
import secrets
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import policies
from annotation.models import (
    Answer,
    HumanLabel,
    Queue,
    QueueItem,
    QueueMember,
    QueueRubric,
    Run,
    VersionEntry,
)
from annotation.models.queues import new_item_key
from annotation.services.criterion_values import queue_criteria_check
from annotation.services.labels import final_labels_refresh_where
from evalapp.bulk import insert_rows
from evalapp.errors import Problem, ServiceError
from evalapp.roles import user_roles
from evalapp.validation import (
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    raise_problems,
    seed_problem,
    text_problem,
    whole_number_problem,
)
from evalstats.sampling import stratified_sample

DEFAULT_OVERLAP = 2


DEFAULT_LEASE_SECONDS = 30 * 60


MAX_OVERLAP = 10


MAX_LEASE_SECONDS = 7 * 24 * 3600


ITEM_COLUMNS = ["queue_id", "key", "answer_id", "stratum", "position", "status", "taken", "done"]


def _digest(*parts) -> int:
    return int.from_bytes(hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()[:8], "big")


def _strata_of(run: Run, qids=None) -> dict[str, str]:
    """qid -> stratum from the run's dataset version ('' when the run has no version): of the qids given, or
    of every line of the version (qids None)."""
    if run.dataset_version_id is None:
        return {}
    entries = VersionEntry.objects.filter(version_id=run.dataset_version_id)
    if qids is not None:
        entries = entries.filter(qid__in=list(qids))
    return dict(entries.values_list("qid", "stratum"))


class _Chosen(NamedTuple):
    """An answer a queue will hold, as plain values (at ten thousand answers, model instances cost more than
    the database does): its primary key, its run's and its stratum."""

    pk: int
    run_pk: int
    stratum: str


def _resolve_items(*, run_id, items, sample, seed, problems) -> list[_Chosen]:
    """The answers the queue will hold, in order, or problems naming what is wrong."""
    out: list[_Chosen] = []
    if bool(run_id) == bool(items):
        problems.append(Problem('give either "run_id" or "items", not both and not neither', field="run_id"))
        return out
    if run_id:
        run = Run.objects.filter(run_id=run_id).select_related("dataset", "dataset_version").first()
        if run is None:
            problems.append(Problem(f"unknown run {run_id!r}", field="run_id"))
            return out
        answers = dict(Answer.objects.filter(run=run).values_list("qid", "pk"))
        if not answers:
            problems.append(Problem(f"run {run_id!r} has no answers", field="run_id"))
            return out
        # The version read whole when the run answers most of it (no list of qids to send), else by the qids.
        version = run.dataset_version
        strata = _strata_of(run, None if version is not None and 2 * len(answers) >= version.examples else answers)
        qids = sorted(answers)
        if sample is not None:
            budget = run.dataset.strata_budget if run.dataset_id else None
            qids = sorted(stratified_sample({q: strata.get(q, "") for q in qids}, sample, seed=seed, budget=budget))
        return [_Chosen(answers[q], run.pk, strata.get(q, "")) for q in qids]
    if sample is not None:
        problems.append(Problem('"sample" draws from a whole run; give "run_id" with it', field="sample"))
    if not isinstance(items, list):
        problems.append(Problem('must be a list of {"run_id", "qid"}', field="items"))
        return out
    wanted: dict[str, set] = {}
    seen = {}
    for i, entry in enumerate(items):
        where = f"items[{i}]"
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("run_id"), str)
            or not isinstance(entry.get("qid"), str)
        ):
            problems.append(Problem('must be {"run_id": str, "qid": str}', field=where))
            continue
        key = (entry["run_id"], entry["qid"])
        if key in seen:
            problems.append(Problem(f"duplicate item {key[0]}/{key[1]} (first at items[{seen[key]}])", field=where))
            continue
        seen[key] = i
        wanted.setdefault(entry["run_id"], set()).add(entry["qid"])
    found = {}
    for rid, qids in wanted.items():
        run = Run.objects.filter(run_id=rid).first()
        if run is None:
            continue
        strata = _strata_of(run, qids)
        for qid, pk in Answer.objects.filter(run=run, qid__in=list(qids)).values_list("qid", "pk"):
            found[(rid, qid)] = _Chosen(pk, run.pk, strata.get(qid, ""))
    for key, i in seen.items():
        if key not in found:
            known_run = Run.objects.filter(run_id=key[0]).exists()
            problems.append(
                Problem(
                    f"run {key[0]!r} has no answer to {key[1]!r}" if known_run else f"unknown run {key[0]!r}",
                    field=f"items[{i}]",
                )
            )
    return [found[key] for key in sorted(seen, key=seen.get) if key in found]


def queue_create(
    *,
    name: str,
    annotators: list[str],
    overlap: int = DEFAULT_OVERLAP,
    rubric: str = "",
    run_id: str | None = None,
    items: list[dict] | None = None,
    sample: int | None = None,
    seed: int | None = None,
    lease_seconds: int = DEFAULT_LEASE_SECONDS,
    created_by=None,
    kind: str = Queue.KIND_LABELLING,
    criteria: object = None,
    tolerance: object = None,
) -> Queue:
    """Create a queue over a whole run, a stratified sample of a run (`sample`), or an explicit item list.

    `criteria` names the criteria of the answers' dataset an annotator grades beside the verdict (none:
    the verdict alone); `tolerance` gives, per ordinal criterion, how many steps apart two values may be
    and still agree (default 0). Every problem is reported at once (field named); nothing is written
    unless all is well.
    """
    problems: list[Problem] = []
    found = text_problem(name, "name", max_length=NAME_MAX, required=True)
    if found is not None:
        problems.append(found)
        name = None
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 1 <= overlap <= MAX_OVERLAP:
        problems.append(Problem(f"must be a whole number from 1 to {MAX_OVERLAP}", field="overlap"))
    if (
        not isinstance(lease_seconds, int)
        or isinstance(lease_seconds, bool)
        or not 60 <= lease_seconds <= MAX_LEASE_SECONDS
    ):
        problems.append(
            Problem(f"must be a whole number of seconds from 60 to {MAX_LEASE_SECONDS}", field="lease_seconds")
        )
    if sample is not None:
        found = whole_number_problem(sample, "sample", minimum=1, maximum=SAMPLE_MAX)
        if found is not None:
            problems.append(found)
            sample = None
    if seed is not None:
        found = seed_problem(seed)
        if found is not None:
            problems.append(found)
            seed = None
    found = text_problem(rubric, "rubric", max_length=RUBRIC_MAX)
    if found is not None:
        problems.append(found)
    if run_id is not None and not isinstance(run_id, str):
        problems.append(Problem("must be a run id (a string)", field="run_id"))
        run_id = None
    User = get_user_model()
    pool = []
    if not isinstance(annotators, list) or not annotators:
        problems.append(Problem("give at least one annotator username", field="annotators"))
        annotators = []
    names = []
    for i, username in enumerate(annotators):
        if not isinstance(username, str) or not username.strip():
            problems.append(Problem("must be a username", field=f"annotators[{i}]"))
        elif username not in names:
            names.append(username)
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    for i, username in enumerate(annotators):
        if isinstance(username, str) and username.strip() and username not in users:
            problems.append(Problem(f"unknown user {username!r}", field=f"annotators[{i}]"))
    pool = [users[n] for n in names if n in users]
    first_at = {}
    for i, username in enumerate(annotators):
        if isinstance(username, str):
            first_at.setdefault(username, i)
    for user in pool:
        if not policies.can_join_pool(roles=user_roles(user)):
            problems.append(
                Problem(
                    f"{user.username!r} does not hold the annotator role; only annotators can be in "
                    "a queue's annotator pool",
                    field=f"annotators[{first_at[user.username]}]",
                )
            )
    if isinstance(overlap, int) and pool and len(pool) == len(names) and overlap > len(pool):
        problems.append(
            Problem(f"overlap {overlap} needs at least {overlap} annotators; the pool has {len(pool)}", field="overlap")
        )
    seed = seed if seed is not None else secrets.randbits(31)
    chosen = _resolve_items(run_id=run_id, items=items, sample=sample, seed=seed, problems=problems)
    run_pks = {c.run_pk for c in chosen}
    criteria, tolerance = queue_criteria_check(
        criteria=criteria, tolerance=tolerance, run_pks=run_pks, problems=problems
    )
    if isinstance(name, str) and name.strip():
        # Annotators see the queue's name: it must not tell them which system or run made the answers.
        for rid, system in Run.objects.filter(pk__in=run_pks).values_list("run_id", "system"):
            leaked = [
                w
                for w in (rid, system)
                if w and re.search(rf"(?<![\w.-]){re.escape(w)}(?![\w.-])", name, re.IGNORECASE)
            ]
            if leaked:
                problems.append(
                    Problem(
                        f"the name shows annotators {leaked[0]!r}, which says which system or run "
                        "made the answers; choose a neutral name",
                        field="name",
                    )
                )
                break
    if problems:
        raise ServiceError(f"cannot create the queue: {len(problems)} problem(s); nothing was written", problems)
    with transaction.atomic():
        queue = Queue.objects.create(
            name=name.strip(),
            kind=kind,
            rubric=rubric,
            overlap=overlap,
            lease_seconds=lease_seconds,
            seed=seed,
            size=len(chosen),
            created_by=created_by,
            criteria=criteria,
            tolerance=tolerance,
            # Its items are open: nothing is paired or timed yet, and the submits keep the counts from here.
            counts_kept=True,
        )
        QueueRubric.objects.create(queue=queue, number=1, text=rubric, created_by=created_by)
        QueueMember.objects.bulk_create([QueueMember(queue=queue, user=u) for u in pool])
        positions = list(range(len(chosen)))
        random.Random(seed).shuffle(positions)
        # Plain rows, every column as the model's defaults would set it: at ten thousand items, model
        # instances cost more than the database does.
        rows = [
            (queue.pk, new_item_key(), c.pk, c.stratum, pos, QueueItem.OPEN, 0, 0)
            for c, pos in zip(chosen, positions, strict=True)
        ]
        insert_rows(QueueItem, ITEM_COLUMNS, rows)
        if kind == Queue.KIND_LABELLING and overlap > 1:
            # A single label that was final outside any queue is work in progress inside this one.
            labelled = HumanLabel.objects.filter(answer__queue_items__queue=queue).values("answer_id")
            final_labels_refresh_where(answers=Answer.objects.filter(pk__in=labelled))
    return queue


@transaction.atomic
def queue_rubric_update(*, queue: Queue, text: str, user=None) -> int:
    """Publish a new version of the queue's guideline; labels record the version their annotator saw."""
    raise_problems(
        "the guideline is not valid; nothing was changed", text_problem(text, "rubric", max_length=RUBRIC_MAX)
    )
    queue = Queue.objects.select_for_update().get(pk=queue.pk)
    if text == queue.rubric:
        return queue.rubric_version
    queue.rubric, queue.rubric_version = text, queue.rubric_version + 1
    queue.save(update_fields=["rubric", "rubric_version"])
    QueueRubric.objects.create(queue=queue, number=queue.rubric_version, text=text, created_by=user)
    return queue.rubric_version


@transaction.atomic
def queue_members_add(*, queue: Queue, usernames: list[str]) -> list[str]:
    """Add annotators to a queue's pool; unknown names are an error naming each; returns those added."""
    User = get_user_model()
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    missing = [Problem(f"unknown user {n!r}", field="annotators") for n in usernames if n not in users]
    missing += [
        Problem(
            f"{n!r} does not hold the annotator role; only annotators can be in a queue's annotator pool",
            field="annotators",
        )
        for n, u in users.items()
        if not policies.can_join_pool(roles=user_roles(u))
    ]
    if missing:
        raise ServiceError("cannot add annotators; nothing was changed", missing)
    have = set(QueueMember.objects.filter(queue=queue).values_list("user_id", flat=True))
    added = [u for n, u in users.items() if u.pk not in have]
    QueueMember.objects.bulk_create([QueueMember(queue=queue, user=u) for u in added])
    return sorted(u.username for u in added)
