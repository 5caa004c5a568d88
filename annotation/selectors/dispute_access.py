"""The disputes as an adjudicator reads them: the adjudication list across queues and imports, and one
dispute with its question, answer and gold passage. Never its run or system (policies: adjudicators settle
answers blind to runs); the annotators' criterion values only to those who may settle them."""

from __future__ import annotations

import json

from annotation import policies
from annotation.models import Answer, VersionEntry
from annotation.selectors.blind import BlindScope
from annotation.selectors.criterion_disputes import criteria_rows
from annotation.selectors.disputes import Dispute, dispute_get, disputed_answers
from evalapp.roles import user_roles


def _question(answer: Answer) -> dict:
    record: dict = {}
    if answer.run.dataset_version_id is not None:
        text = (
            VersionEntry.objects.filter(version_id=answer.run.dataset_version_id, qid=answer.qid)
            .values_list("example__canonical", flat=True)
            .first()
        )
        record = json.loads(text) if text else {}
    return {
        "question": record.get("question") or answer.extra.get("question") or "",
        "answer": answer.answer,
        "gold_text": record.get("gold_text"),
        "expected": record.get("expected"),
    }


def _row(d: Dispute, *, content: bool, values: bool = False) -> dict:
    """What an adjudicator is shown of a dispute: never its run or system (policies: adjudicators settle
    answers blind to runs); the annotators' criterion values only with `values`."""
    row = {
        "key": d.key,
        "qid": d.qid,
        "dataset": d.dataset,
        "stratum": d.stratum,
        "source": d.source,
        "sources": list(d.sources),
        "queues": [{"id": pk, "name": name, "kind": kind, "status": status} for pk, name, kind, status in d.queues],
        "labels": [
            {"annotator": lab.annotator, "verdict": lab.verdict, "rationale": lab.rationale, "source": lab.source}
            for lab in d.labels
        ],
        "verdict_disputed": d.verdict_disputed,
        "disputed_criteria": list(dict.fromkeys(c.name for c in d.criteria)),
        "criteria": criteria_rows(d.criteria, d.who, values=values),
    }
    if content:
        answer = Answer.objects.select_related("run").get(pk=d.answer_id)
        row.update(_question(answer))
    return row


def _may_settle(d: Dispute, user, roles: set[str], scope: BlindScope) -> str | None:
    """Why this user may not settle the dispute (None when they may)."""
    if not policies.can_adjudicate(user_id=user.pk, roles=roles, annotator_ids=set(d.people)):
        return "labelled"
    if not scope.can_read_answer(d.answer_id, d.run_pk, shows_run=False):
        return "blind"
    return None


def disputes_for_user(
    user,
    *,
    scope: BlindScope,
    source: str | None = None,
    queue: int | None = None,
    dataset: str | None = None,
) -> dict:
    """The adjudication list: every disputed answer this user may settle, across queues and imports,
    filtered by label `source` ("queue", "import", "app"), by `queue` id or by `dataset` name.

    Disputes they labelled (or were handed in a queue) and those in their blind scope are left out and
    counted (`not_yours`, `blind_excluded`); `total` counts every dispute matching the filters; those
    waiting for a rework queue are counted apart (`in_rework`)."""
    roles = set(user_roles(user))
    policies.check_can_list_disputes(roles=roles)
    every = disputed_answers(criteria=True)
    matching = [
        d
        for d in every
        if not d.in_rework
        and (source is None or source in d.sources)
        and (queue is None or any(pk == queue for pk, *_ in d.queues))
        and (dataset is None or d.dataset == dataset)
    ]
    why = [_may_settle(d, user, roles, scope) for d in matching]
    rows = [_row(d, content=False, values=True) for d, w in zip(matching, why, strict=True) if w is None]
    return {
        "count": len(rows),
        "total": len(matching),
        "not_yours": why.count("labelled"),
        "blind_excluded": why.count("blind"),
        "in_rework": sum(1 for d in every if d.in_rework),
        "disputes": rows,
    }


def dispute_for_user(key, user, *, scope: BlindScope) -> dict:
    """One dispute as its adjudicator sees it: question, answer, gold passage, expected answer and the
    disagreeing labels side by side. Refused (403) to one of its labellers and while it is blind to them."""
    d = dispute_get(key)
    roles = set(user_roles(user))
    policies.check_can_adjudicate(user_id=user.pk, roles=roles, annotator_ids=set(d.people))
    policies.check_can_read_answer(
        answer_id=d.answer_id,
        run_id=d.run_pk,
        blind_answer_ids=scope.answer_ids,
        blind_run_ids=scope.run_ids,
        shows_run=False,
    )
    return _row(d, content=True, values=True)
