"""Labelling queues with criteria: the queue's criteria and tolerance checked at creation, every criterion
valued with the verdict (or nothing written), an item disputed per criterion (an ordinal scale within its
tolerance agrees), and adjudication criterion by criterion under the verdict's policy."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import (
    Adjudication,
    Assignment,
    CriterionAdjudication,
    CriterionLabel,
    CriterionLabelEvent,
    HumanLabel,
    Queue,
    QueueItem,
)
from annotation.selectors.criterion_finals import criterion_finals
from annotation.services.claims import queue_next
from annotation.services.criteria import criterion_set
from annotation.services.criterion_adjudication import criterion_adjudicate
from annotation.services.labelling import item_adjudicate, label_submit
from annotation.services.queues import queue_create
from evalapp.errors import ServiceError

FIVE = ["1", "2", "3", "4", "5"]


@pytest.fixture
def crit_queue(make_run, pool):
    """crit_queue(n=2, tolerance=None) -> a queue of n items grading faithfulness (ordinal 1..5) and tone
    (categorical) beside the verdict, ann1 and ann2, overlap 2."""

    def make(n: int = 2, *, tolerance=None, criteria=("faithfulness", "tone")):
        run_id = make_run(n)
        criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=FIVE, pass_rule=">=4")
        criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
        return queue_create(
            name="q",
            annotators=["ann1", "ann2"],
            overlap=2,
            run_id=run_id,
            seed=7,
            created_by=pool["eng"],
            criteria=list(criteria),
            tolerance=tolerance,
        )

    return make


def _state():
    return (
        Queue.objects.count(),
        HumanLabel.objects.count(),
        CriterionLabel.objects.count(),
        CriterionLabelEvent.objects.count(),
        list(Assignment.objects.order_by("id").values_list("state", "submitted_at")),
        list(QueueItem.objects.order_by("id").values_list("status", "taken", "done")),
        Adjudication.objects.count(),
        CriterionAdjudication.objects.count(),
    )


def _held(queue, user):
    claim = queue_next(queue=queue, annotator=user)
    assert claim is not None
    return claim.item


def _label_both(queue, pool, first: dict, second: dict, verdicts=("correct", "correct")):
    item = _held(queue, pool["ann1"])
    assert _held(queue, pool["ann2"]).pk == item.pk
    label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict=verdicts[0], values=first)
    label_submit(queue=queue, item_id=item.pk, annotator=pool["ann2"], verdict=verdicts[1], values=second)
    item.refresh_from_db()
    return item


@pytest.mark.django_db
def test_a_queue_keeps_its_criteria_and_tolerance(crit_queue):
    queue = crit_queue(tolerance={"faithfulness": 1})
    queue.refresh_from_db()
    assert (queue.criteria, queue.tolerance) == (["faithfulness", "tone"], {"faithfulness": 1})


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("criteria", "tolerance", "field", "message"),
    [
        (
            ["faithfulness", "fluency"],
            None,
            "criteria[1]",
            "unknown criterion 'fluency' (the dataset's criteria: faithfulness, tone)",
        ),
        (["tone"], {"tone": 1}, "tolerance.tone", "'tone' is categorical: a tolerance needs an ordinal scale"),
        (
            ["faithfulness"],
            {"faithfulness": -1},
            "tolerance.faithfulness",
            "must be a whole number of steps, 0 or more, not -1",
        ),
        (["faithfulness"], {"tone": 0}, "tolerance.tone", "'tone' is not one of the queue's criteria"),
        (["faithfulness", "faithfulness"], None, "criteria", "given twice: faithfulness"),
    ],
)
def test_bad_criteria_or_tolerance_are_refused_naming_the_field_and_nothing_is_written(
    crit_queue, criteria, tolerance, field, message
):
    crit_queue(criteria=[])  # the dataset and its criteria
    before = _state()
    with pytest.raises(ServiceError) as exc:
        crit_queue(criteria=criteria, tolerance=tolerance)
    assert exc.value.status == 400
    assert [(p.field, p.message) for p in exc.value.problems] == [(field, message)]
    assert _state() == before


@pytest.mark.django_db
def test_values_are_written_with_the_verdict_in_the_queue_source(crit_queue, pool):
    queue = crit_queue()
    item = _held(queue, pool["ann1"])
    label_submit(
        queue=queue,
        item_id=item.pk,
        annotator=pool["ann1"],
        verdict="correct",
        values={"faithfulness": "4", "tone": "kind"},
    )
    assert sorted(CriterionLabel.objects.values_list("annotator__username", "name", "value", "source")) == [
        ("ann1", "faithfulness", "4", "queue"),
        ("ann1", "tone", "kind", "queue"),
    ]
    assert sorted(CriterionLabelEvent.objects.values_list("name", "old_value", "new_value", "source")) == [
        ("faithfulness", "", "4", "queue"),
        ("tone", "", "kind", "queue"),
    ]
    assert list(HumanLabel.objects.values_list("verdict", "source")) == [("correct", "queue")]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("values", "problems"),
    [
        ({"faithfulness": "4"}, [("values.tone", "tone: must be one of rude, neutral, kind, not missing")]),
        (
            {"faithfulness": "6", "tone": "kind"},
            [("values.faithfulness", "faithfulness: must be one of 1, 2, 3, 4, 5, not '6'")],
        ),
        (
            {"faithfulness": "4", "tone": "kind", "fluency": "ok"},
            [("values.fluency", "this queue does not grade 'fluency' (its criteria: faithfulness, tone)")],
        ),
        (
            None,
            [
                ("values.faithfulness", "faithfulness: must be one of 1, 2, 3, 4, 5, not missing"),
                ("values.tone", "tone: must be one of rude, neutral, kind, not missing"),
            ],
        ),
    ],
)
def test_a_missing_or_bad_value_is_400_and_nothing_is_written(crit_queue, pool, values, problems):
    queue = crit_queue()
    item = _held(queue, pool["ann1"])
    before = _state()
    with pytest.raises(ServiceError) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="correct", values=values)
    assert exc.value.status == 400
    assert [(p.field, p.message) for p in exc.value.problems] == problems
    assert _state() == before


@pytest.mark.django_db
def test_values_in_a_queue_without_criteria_are_refused(make_queue, pool):
    queue = make_queue(2)
    item = _held(queue, pool["ann1"])
    with pytest.raises(ServiceError) as exc:
        label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="correct", values={"tone": "kind"})
    assert [(p.field, p.message) for p in exc.value.problems] == [
        ("values.tone", "this queue does not grade 'tone' (its criteria: none)")
    ]
    assert HumanLabel.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("tolerance", "first", "second", "status"),
    [
        (None, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "4", "tone": "kind"}, "agreed"),
        (None, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "3", "tone": "kind"}, "disputed"),
        ({"faithfulness": 1}, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "3", "tone": "kind"}, "agreed"),
        ({"faithfulness": 1}, {"faithfulness": "5", "tone": "kind"}, {"faithfulness": "3", "tone": "kind"}, "disputed"),
        ({"faithfulness": 4}, {"faithfulness": "5", "tone": "kind"}, {"faithfulness": "1", "tone": "rude"}, "disputed"),
    ],
)
def test_an_item_is_disputed_on_a_criterion_beyond_its_tolerance(crit_queue, pool, tolerance, first, second, status):
    queue = crit_queue(tolerance=tolerance)
    item = _label_both(queue, pool, first, second)
    assert item.status == status


@pytest.mark.django_db
def test_criteria_are_settled_one_by_one_and_the_item_is_adjudicated_when_nothing_is_left(crit_queue, pool):
    queue = crit_queue()
    item = _label_both(
        queue,
        pool,
        {"faithfulness": "4", "tone": "kind"},
        {"faithfulness": "2", "tone": "rude"},
        verdicts=("correct", "incorrect"),
    )
    assert item.status == "disputed"
    made = criterion_adjudicate(
        queue=queue, item_id=item.pk, adjudicator=pool["adj"], values={"faithfulness": "3"}, reason="partly supported"
    )
    assert [(m.name, m.value, m.reason, m.criterion.number) for m in made] == [
        ("faithfulness", "3", "partly supported", 1)
    ]
    item.refresh_from_db()
    assert item.status == "disputed"  # tone and the verdict are still open
    criterion_adjudicate(
        queue=queue,
        item_id=item.pk,
        adjudicator=pool["adj"],
        values={"tone": "neutral"},
        reason="plain",
        verdict="correct",
    )
    item.refresh_from_db()
    assert item.status == "adjudicated"
    assert list(Adjudication.objects.values_list("verdict", "reason")) == [("correct", "plain")]
    item.answer.refresh_from_db()
    assert (item.answer.final_verdict, item.answer.final_source) == ("correct", "adjudication")
    # A later decision counts.
    criterion_adjudicate(
        queue=queue, item_id=item.pk, adjudicator=pool["adj"], values={"faithfulness": "2"}, reason="second look"
    )
    assert criterion_finals(name="faithfulness", answer_ids=[item.answer_id]) == {item.answer_id: "2"}
    assert criterion_finals(name="tone", answer_ids=[item.answer_id]) == {item.answer_id: "neutral"}


@pytest.mark.django_db
def test_a_verdict_alone_leaves_a_criterion_dispute_open(crit_queue, pool):
    queue = crit_queue()
    item = _label_both(
        queue,
        pool,
        {"faithfulness": "4", "tone": "kind"},
        {"faithfulness": "2", "tone": "kind"},
        ("correct", "incorrect"),
    )
    item_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["adj"], verdict="incorrect", reason="wrong figure")
    item.refresh_from_db()
    assert item.status == "disputed"
    criterion_adjudicate(
        queue=queue, item_id=item.pk, adjudicator=pool["adj"], values={"faithfulness": "2"}, reason="r"
    )
    item.refresh_from_db()
    assert item.status == "adjudicated"


@pytest.mark.django_db
def test_an_annotator_of_the_item_cannot_adjudicate_and_nothing_is_written(crit_queue, pool, make_user):
    queue = crit_queue()
    item = _label_both(queue, pool, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "2", "tone": "kind"})
    ann1 = pool["ann1"]
    ann1.groups.add(pool["adj"].groups.get(name="adjudicator"))
    before = _state()
    with pytest.raises(PermissionDenied):
        criterion_adjudicate(queue=queue, item_id=item.pk, adjudicator=ann1, values={"faithfulness": "3"}, reason="r")
    assert _state() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"tone": "rude"}, ("values.tone", "tone: the item's values agree; there is nothing to settle")),
        ({"faithfulness": "9"}, ("values.faithfulness", "faithfulness: must be one of 1, 2, 3, 4, 5, not '9'")),
        (
            {"fluency": "1"},
            ("values.fluency", "this queue does not grade 'fluency' (its criteria: faithfulness, tone)"),
        ),
    ],
)
def test_a_bad_criterion_decision_is_400_and_nothing_is_written(crit_queue, pool, values, problem):
    queue = crit_queue()
    item = _label_both(queue, pool, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "2", "tone": "kind"})
    before = _state()
    with pytest.raises(ServiceError) as exc:
        criterion_adjudicate(queue=queue, item_id=item.pk, adjudicator=pool["adj"], values=values, reason="r")
    assert [(p.field, p.message) for p in exc.value.problems] == [problem]
    assert _state() == before


@pytest.mark.django_db
def test_an_ordinal_pair_within_the_queues_tolerance_is_final_at_the_lower_value(crit_queue, pool):
    queue = crit_queue(tolerance={"faithfulness": 1})
    item = _label_both(queue, pool, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "3", "tone": "rude"})
    assert item.status == "disputed"  # on tone only
    assert criterion_finals(name="faithfulness", answer_ids=[item.answer_id]) == {item.answer_id: "3"}
    assert criterion_finals(name="tone", answer_ids=[item.answer_id]) == {}


@pytest.mark.django_db
def test_criterion_agreement_counts_an_adjudicated_answer_as_final(crit_queue, pool):
    from annotation.selectors.criterion_agreement import criterion_agreement

    queue = crit_queue(n=1)
    item = _label_both(queue, pool, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "2", "tone": "kind"})
    run_id = item.answer.run.run_id
    before = criterion_agreement(run_id=run_id, criterion="faithfulness", iters=0)
    assert (before["agreed"], before["disputed"], before["disputed_qids"]) == (0, 1, ["q-0000"])
    criterion_adjudicate(
        queue=queue, item_id=item.pk, adjudicator=pool["adj"], values={"faithfulness": "3"}, reason="r"
    )
    after = criterion_agreement(run_id=run_id, criterion="faithfulness", iters=0)
    assert (after["agreed"], after["disputed"], after["disputed_qids"]) == (1, 0, [])


@pytest.mark.django_db
def test_create_queue_takes_criteria_and_tolerances_and_exits_2_on_a_bad_one(make_run, pool):
    from tests.conftest import run_cmd

    run_id = make_run(2)
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=FIVE)
    base = ["create_queue", "graded", "--run", run_id, "--annotator", "ann1", "--annotator", "ann2"]
    code, _out, err = run_cmd(*base, "--criterion", "faithfulness", "--tolerance", "faithfulness=x")
    assert (code, Queue.objects.count()) == (2, 0)
    assert "'faithfulness=x' must be NAME=STEPS" in err
    code, _out, err = run_cmd(*base, "--criterion", "fluency")
    assert (code, Queue.objects.count()) == (2, 0)
    assert "unknown criterion 'fluency'" in err
    code, _out, _err = run_cmd(*base, "--criterion", "faithfulness", "--tolerance", "faithfulness=1")
    assert code == 0
    assert list(Queue.objects.values_list("criteria", "tolerance")) == [(["faithfulness"], {"faithfulness": 1})]


@pytest.mark.django_db
def test_revising_a_complete_item_can_change_its_values_and_its_status(crit_queue, pool):
    from annotation.services.labelling import label_revise

    queue = crit_queue()
    item = _label_both(queue, pool, {"faithfulness": "4", "tone": "kind"}, {"faithfulness": "4", "tone": "kind"})
    assert item.status == "agreed"
    before = _state()
    with pytest.raises(ServiceError):
        label_revise(
            queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="correct", rationale="r", values={"tone": "x"}
        )
    assert _state() == before
    label_revise(
        queue=queue,
        item_id=item.pk,
        annotator=pool["ann1"],
        verdict="correct",
        rationale="misread the passage",
        values={"faithfulness": "2", "tone": "kind"},
    )
    item.refresh_from_db()
    assert item.status == "disputed"
    assert CriterionLabel.objects.get(annotator=pool["ann1"], name="faithfulness").value == "2"
