"""Disputed answers: labels that disagree and no adjudication, wherever the labels came from (a queue,
an import, the app). The adjudication list across queues and imports (dispute_access) reads them here, and every
output that leaves unsettled answers out (calibration samples, run scores, comparisons) names them.

A label still being collected (made on a queue item that is not complete) is work in progress, not
a dispute: the queue settles it first. Answers are named to adjudicators by an opaque key (an HMAC of
the row id), never the row id, whose order tells which answers a run wrote together."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import CharField, Count, QuerySet, Value
from django.utils.crypto import salted_hmac

from annotation.models import (
    Adjudication,
    Answer,
    Assignment,
    HumanLabel,
    Queue,
    QueueItem,
    VersionEntry,
)
from annotation.selectors.criterion_disputes import (
    CriterionDispute,
    criterion_disputed_items,
    outstanding_criteria,
)
from evalapp.errors import NotFound, ServiceError

SOURCES = ("queue", "import", "app")
# How many disputed answers an output names (the count is always whole).
NAMED_MAX = 100


@dataclass(frozen=True)
class DisputeLabel:
    annotator_id: int
    annotator: str
    verdict: str
    rationale: str
    source: str
    labelled_at: str


@dataclass(frozen=True)
class Dispute:
    """One disputed answer: its key, what it answers, the disagreeing labels and where they came from.

    `source` is "queue" when a queue item holding the answer completed with disagreeing labels, else the
    label sources joined ("import", "app", "import+queue"…); `queues` are (id, name, kind, item status)
    of every queue holding the answer; `people` every user who labelled it or was handed it in a queue
    (none of them may adjudicate it)."""

    key: str
    answer_id: int
    run_pk: int
    run_id: str
    qid: str
    dataset: str | None
    stratum: str
    source: str
    sources: tuple[str, ...]
    labels: tuple[DisputeLabel, ...]
    queues: tuple[tuple[int, str, str, str], ...] = ()
    people: frozenset[int] = field(default_factory=frozenset)
    # Whether its verdicts are in dispute; else only `criteria` are (the adjudication list's criterion disputes).
    verdict_disputed: bool = True
    criteria: tuple[CriterionDispute, ...] = ()
    who: dict[int, str] = field(default_factory=dict)  # annotator id -> username, for `criteria` values

    @property
    def in_rework(self) -> bool:
        """Sent back to its annotator by a drifted relabel audit and not relabelled yet: the adjudication
        list waits for the rework (which may settle it), the outputs still name it as left out."""
        return any(kind == Queue.KIND_REWORK and status == QueueItem.OPEN for _pk, _n, kind, status in self.queues)


def dispute_key(answer_id: int) -> str:
    """The opaque, stable key an adjudicator names a disputed answer by."""
    return salted_hmac("annotation.disputes.key", str(answer_id)).hexdigest()[:24]


def _candidate_ids(answers: QuerySet | None) -> list[int]:
    """Answers whose labels hold two verdicts or more (adjudicated or not), read off the labels table."""
    return _candidates(answers, criteria=False)[0]


def _candidates(answers: QuerySet | None, *, criteria: bool, settled: bool = False) -> tuple[list[int], set[int]]:
    """(answers whose labels hold two verdicts or more, answers on a disputed item of a queue that grades
    criteria when `criteria`, adjudicated ones too with `settled`), in one statement: the second set comes
    in the same UNION."""
    labels = HumanLabel.objects.all()
    if answers is not None:
        labels = labels.filter(answer__in=answers)
    verdicts = labels.order_by().values("answer_id").annotate(n=Count("verdict", distinct=True)).filter(n__gte=2)
    if not criteria:
        return list(verdicts.values_list("answer_id", flat=True)), set()
    tagged = verdicts.annotate(on=Value("verdict", output_field=CharField())).values_list("answer_id", "on")
    items = (
        criterion_disputed_items(answers, settled=settled)
        .annotate(on=Value("criteria", output_field=CharField()))
        .values_list("answer_id", "on")
    )
    found: list[int] = []
    on_criteria: set[int] = set()
    for answer_id, on in tagged.union(items):
        if on == "verdict":
            found.append(answer_id)
        else:
            on_criteria.add(answer_id)
    return sorted(found), on_criteria


def _in_progress(answer_ids: list[int]) -> set[tuple[int, int]]:
    """(answer id, annotator id) of labels submitted on queue items that are still open."""
    return set(
        Assignment.objects.filter(
            item__answer_id__in=answer_ids, item__status=QueueItem.OPEN, state=Assignment.DONE
        ).values_list("item__answer_id", "annotator_id")
    )


def _strata(rows: list[tuple[int, str, int | None]]) -> dict[tuple[int | None, str], str]:
    by_version: dict[int, set[str]] = defaultdict(set)
    for _pk, qid, version_id in rows:
        if version_id is not None:
            by_version[version_id].add(qid)
    out: dict[tuple[int | None, str], str] = {}
    for version_id, qids in by_version.items():
        for qid, stratum in VersionEntry.objects.filter(version_id=version_id, qid__in=list(qids)).values_list(
            "qid", "stratum"
        ):
            out[(version_id, qid)] = stratum
    return out


def _build(
    answer_ids: list[int], *, include_settled: bool, criterion_ids: set[int] | frozenset[int] = frozenset()
) -> dict[int, Dispute | str]:
    """answer id -> Dispute, or (with include_settled) "adjudicated" / "in progress" / "agreed" for the
    candidates that are not disputed. `criterion_ids` are answers that may be disputed on a criterion
    (criterion_disputed_items): those that are get the criteria left unsettled, verdict dispute or not."""
    every = sorted(set(answer_ids) | set(criterion_ids))
    if not every:
        return {}
    adjudicated = set(Adjudication.objects.filter(answer_id__in=every).values_list("answer_id", flat=True).distinct())
    progress = _in_progress(every)
    labels: dict[int, list[DisputeLabel]] = defaultdict(list)
    who: dict[int, str] = {}
    for answer_id, annotator_id, username, verdict, rationale, source, at in (
        HumanLabel.objects.filter(answer_id__in=every)
        .order_by("answer_id", "labelled_at", "id")
        .values_list(
            "answer_id", "annotator_id", "annotator__username", "verdict", "rationale", "source", "labelled_at"
        )
    ):
        who[annotator_id] = username
        if (answer_id, annotator_id) in progress:
            continue
        labels[answer_id].append(
            DisputeLabel(annotator_id, username, verdict, rationale, source, at.isoformat().replace("+00:00", "Z"))
        )
    open_criteria = outstanding_criteria(criterion_ids) if criterion_ids else {}
    out: dict[int, Dispute | str] = {}
    disputed = []
    verdict_disputed: set[int] = set()
    for answer_id in every:
        if answer_id not in adjudicated and len({lab.verdict for lab in labels[answer_id]}) >= 2:
            verdict_disputed.add(answer_id)
        if answer_id in verdict_disputed or open_criteria.get(answer_id):
            disputed.append(answer_id)
        elif include_settled:
            if answer_id in adjudicated or answer_id in criterion_ids:
                out[answer_id] = "adjudicated"
            else:
                out[answer_id] = "in progress" if any(a == answer_id for a, _u in progress) else "agreed"
    if not disputed:
        return out
    queues: dict[int, list[tuple[int, str, str, str]]] = defaultdict(list)
    item_strata: dict[int, str] = {}
    for answer_id, queue_id, name, kind, status, stratum in QueueItem.objects.filter(
        answer_id__in=disputed
    ).values_list("answer_id", "queue_id", "queue__name", "queue__kind", "status", "stratum"):
        queues[answer_id].append((queue_id, name, kind, status))
        if stratum:
            item_strata.setdefault(answer_id, stratum)
    people: dict[int, set[int]] = defaultdict(set)
    for answer_id, user_id in Assignment.objects.filter(item__answer_id__in=disputed).values_list(
        "item__answer_id", "annotator_id"
    ):
        people[answer_id].add(user_id)
    for answer_id, user_id in HumanLabel.objects.filter(answer_id__in=disputed).values_list(
        "answer_id", "annotator_id"
    ):
        people[answer_id].add(user_id)
    rows = list(
        Answer.objects.filter(pk__in=disputed).values_list(
            "pk", "qid", "run__dataset_version_id", "run_id", "run__run_id", "run__dataset__name"
        )
    )
    strata = _strata([(pk, qid, version_id) for pk, qid, version_id, *_ in rows])
    for pk, qid, version_id, run_pk, run_id, dataset in rows:
        held = sorted(queues[pk])
        sources = tuple(sorted({lab.source for lab in labels[pk]}))
        source = "queue" if any(s == QueueItem.DISPUTED for *_x, s in held) else "+".join(sources)
        out[pk] = Dispute(
            key=dispute_key(pk),
            answer_id=pk,
            run_pk=run_pk,
            run_id=run_id,
            qid=qid,
            dataset=dataset,
            stratum=item_strata.get(pk) or strata.get((version_id, qid), ""),
            source=source,
            sources=sources,
            labels=tuple(labels[pk]),
            queues=tuple(held),
            people=frozenset(people[pk]),
            verdict_disputed=pk in verdict_disputed,
            criteria=tuple(open_criteria.get(pk, ())),
            who={uid: who.get(uid, str(uid)) for c in open_criteria.get(pk, ()) for uid, _v in c.given},
        )
    return out


def disputed_answers(*, answers: QuerySet | None = None, criteria: bool = False) -> list[Dispute]:
    """Every disputed answer (among `answers`, a queryset of Answer; None: all), by run id and qid: on its
    verdict (what outputs leave out and name), and with `criteria` also those disputed on a criterion alone
    (what the adjudication list settles)."""
    verdicts, on_criteria = _candidates(answers, criteria=criteria)
    found = _build(verdicts, include_settled=False, criterion_ids=on_criteria)
    return sorted((d for d in found.values() if isinstance(d, Dispute)), key=lambda d: (d.run_id, d.qid))


def disputed_qids(run) -> list[str]:
    """The qids of a run's disputed answers, sorted: the rule of `_build` (not adjudicated; two verdicts or
    more among the labels, those still being collected on open queue items set aside) without building
    each Dispute (its queues, people and stratum), which grading a run with thousands of them need not."""
    answer_ids = _candidate_ids(Answer.objects.filter(run=run))
    if not answer_ids:
        return []
    adjudicated = set(Adjudication.objects.filter(answer_id__in=answer_ids).values_list("answer_id", flat=True))
    progress = _in_progress(answer_ids)
    verdicts: dict[int, set[str]] = defaultdict(set)
    qid_of: dict[int, str] = {}
    for answer_id, qid, annotator_id, verdict in HumanLabel.objects.filter(answer_id__in=answer_ids).values_list(
        "answer_id", "answer__qid", "annotator_id", "verdict"
    ):
        qid_of[answer_id] = qid
        if (answer_id, annotator_id) not in progress:
            verdicts[answer_id].add(verdict)
    return sorted(qid_of[a] for a in answer_ids if a not in adjudicated and len(verdicts[a]) >= 2)


def left_out(names: Iterable[str], *, what: str = "disputed answer") -> dict:
    """The `disputed_left_out` object of an output: how many were left out, which (the first NAMED_MAX),
    and the sentence that says it ("3 disputed answers left out: q12, q40, q41")."""
    names = sorted(names)
    shown = names[:NAMED_MAX]
    more = f" … (+{len(names) - NAMED_MAX} more)" if len(names) > NAMED_MAX else ""
    words = (
        f"{len(names)} {what}{'s' if len(names) != 1 else ''} left out: {', '.join(shown)}{more}"
        if names
        else f"no {what}s left out"
    )
    return {"n": len(names), "answers": shown, "words": words}


def dispute_get(key) -> Dispute:
    """The disputed answer by its key: NotFound for an unknown key, 409 when it is no longer disputed."""
    if not isinstance(key, str) or not key:
        raise NotFound(f"no disputed answer {key!r}")
    verdicts, on_criteria = _candidates(None, criteria=True, settled=True)
    match = next((pk for pk in (*verdicts, *sorted(on_criteria)) if dispute_key(pk) == key), None)
    if match is None:
        raise NotFound(f"no disputed answer {key!r}")
    found = _build([match] if match in verdicts else [], include_settled=True, criterion_ids={match} & on_criteria)[
        match
    ]
    if isinstance(found, str):
        raise ServiceError(
            f"this answer is no longer disputed ({found}); there is nothing to adjudicate", code=1, status=409
        )
    if found.in_rework:
        raise ServiceError(
            "this answer is back with its annotator in a rework queue; adjudicate it once they have relabelled it",
            code=1,
            status=409,
        )
    return found
