"""Proposing production questions to tag: a stratified, seeded sample of traffic not yet in the set,
added to the working copy as new questions marked `"origin": "traffic"` (the tagging list shows them)."""

from django.db import transaction

from annotation.models import TrafficQuestion, WorkingExample
from annotation.selectors.traffic import traffic_counts
from annotation.services.traffic import _dataset, set_texts
from annotation.services.working import working_edit
from evalapp.validation import SAMPLE_MAX, raise_problems, seed_problem, whole_number_problem
from evalstats.sampling import draw, plan_allocation

ORIGIN = "traffic"


def proposal_qid(traffic_id: int) -> str:
    """The working-copy qid of a proposed traffic question."""
    return f"traffic-{traffic_id}"


@transaction.atomic
def traffic_propose(*, dataset_name: str, k: int, seed: int = 0, user=None) -> list[dict]:
    """Draw up to k classified traffic questions not yet proposed nor in the working copy, shared over
    the strata by their traffic share (largest remainder, evalstats.sampling), seeded; add each to the
    working copy as a new question. A stratum outside the budget is skipped (the set would refuse it);
    unclassified traffic cannot be proposed until it has a stratum."""
    raise_problems(
        "the proposal is not valid; nothing was added",
        whole_number_problem(k, "propose", minimum=1, maximum=SAMPLE_MAX),
        seed_problem(seed),
    )
    dataset = _dataset(dataset_name, lock=True)
    in_set = set_texts(dataset)
    # A qid already used in the working copy (even by a removed question) is never reused.
    taken = set(
        WorkingExample.objects.filter(dataset=dataset, qid__startswith="traffic-").values_list("qid", flat=True)
    )
    budget = dataset.strata_budget or {}
    candidates: dict[str, list[int]] = {}
    texts: dict[int, tuple[str, str]] = {}
    rows = TrafficQuestion.objects.filter(dataset=dataset, stratum__isnull=False, proposed_qid="")
    for traffic_id, stratum, text, normalized in rows.values_list("id", "stratum", "text", "normalized_text"):
        if stratum is None or normalized in in_set or (budget and stratum not in budget):
            continue
        if proposal_qid(traffic_id) in taken:
            continue
        candidates.setdefault(stratum, []).append(traffic_id)
        texts[traffic_id] = (stratum, text)
    asked, _unclassified, _distinct = traffic_counts(dataset)
    shares = {s: float(asked.get(s, 0)) for s in candidates}
    if not candidates:
        return []
    plan = plan_allocation(k, {s: len(ids) for s, ids in candidates.items()}, shares, floor=0)
    proposed: list[dict] = []
    for stratum, traffic_id in draw(candidates, plan.counts, seed=seed):
        qid = proposal_qid(traffic_id)
        record = {
            "qid": qid,
            "question": texts[traffic_id][1],
            "stratum": stratum,
            "origin": ORIGIN,
            "traffic_id": traffic_id,
        }
        working_edit(dataset_name=dataset.name, qid=qid, changes=record, base_revision=0, user=user)
        proposed.append({"traffic_id": traffic_id, "qid": qid, "stratum": stratum, "question": record["question"]})
    for p in proposed:
        TrafficQuestion.objects.filter(pk=p["traffic_id"]).update(proposed_qid=p["qid"])
    return proposed
