"""The one-answer final-label refresh a completing submit uses gives exactly what the set-based
final_label_refresh gives, over answers in every state the rule distinguishes."""

import itertools

import pytest

from annotation.models import Adjudication, Answer, Queue
from annotation.services.labels import answer_final_refresh, final_label_refresh, label_write

# (verdicts of the answer's labels, adjudications in time order)
STATES = list(
    itertools.product(
        [(), ("correct",), ("incorrect",), ("correct", "correct"), ("correct", "incorrect"), ("incorrect",) * 3],
        [(), ("incorrect",), ("correct", "incorrect")],
    )
)


def finals(ids):
    return {
        pk: (v, s) for pk, v, s in Answer.objects.filter(pk__in=ids).values_list("pk", "final_verdict", "final_source")
    }


@pytest.mark.parametrize("overlap", [None, 2, 3])
def test_answer_final_refresh_matches_final_label_refresh(make_queue, make_run, pool, overlap):
    if overlap is None:
        answers = list(Answer.objects.filter(run__run_id=make_run(len(STATES))).order_by("qid"))
    else:
        queue = make_queue(len(STATES), overlap=overlap, annotators=("ann1", "ann2", "ann3"))
        assert queue.kind == Queue.KIND_LABELLING
        answers = list(Answer.objects.filter(pk__in=queue.items.values("answer_id")).order_by("qid"))
    annotators = [pool["ann1"], pool["ann2"], pool["ann3"]]
    for answer, (verdicts, decisions) in zip(answers, STATES, strict=True):
        for user, verdict in zip(annotators, verdicts, strict=False):
            label_write(answer=answer, annotator=user, verdict=verdict, refresh_final=False)
        for verdict in decisions:
            Adjudication.objects.create(answer=answer, adjudicator=pool["adj"], verdict=verdict, reason="r")

    ids = [a.pk for a in answers]
    Answer.objects.filter(pk__in=ids).update(final_verdict="", final_source="")
    final_label_refresh(answer_ids=ids)
    expected = finals(ids)

    Answer.objects.filter(pk__in=ids).update(final_verdict="", final_source="")
    changed = [answer_final_refresh(answer=Answer.objects.select_for_update().get(pk=pk)) for pk in ids]
    assert finals(ids) == expected
    assert changed == [expected[pk] != ("", "") for pk in ids]
    assert len(set(expected.values())) >= 3  # the states reach several outcomes, not one
    # Already right: nothing written, and it says so.
    assert [answer_final_refresh(answer=Answer.objects.select_for_update().get(pk=pk)) for pk in ids] == [False] * len(
        ids
    )
