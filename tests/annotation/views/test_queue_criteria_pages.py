"""The queue pages with criteria: the labelling page draws a radio group per criterion (keys shown, never
another annotator's value) and its form writes the values; the adjudication page names the disputed
criteria with each annotator's value and settles them."""

import pytest

from annotation.models import CriterionAdjudication, CriterionLabel, QueueItem
from annotation.services.claims import queue_next
from annotation.services.criteria import criterion_set
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create
from tests.annotation.views.conftest import client_for


@pytest.fixture
def graded(make_run, pool):
    run_id = make_run(1)
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=["1", "2", "3", "4", "5"])
    criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    return queue_create(
        name="graded", annotators=["ann1", "ann2"], run_id=run_id, seed=3, criteria=["faithfulness", "tone"]
    )


@pytest.mark.django_db
def test_the_labelling_page_draws_each_criterion_and_writes_its_values(graded, pool):
    claim = queue_next(queue=graded, annotator=pool["ann2"])
    assert claim is not None
    label_submit(
        queue=graded,
        item_id=claim.item.pk,
        annotator=pool["ann2"],
        verdict="correct",
        values={"faithfulness": "2", "tone": "rude"},
    )
    c = client_for(pool["ann1"])
    html = c.get(f"/queues/{graded.pk}/label/").content.decode()
    assert 'data-criterion="faithfulness" data-kind="ordinal"' in html
    assert 'name="values.faithfulness" value="5" data-key="5" required' in html
    assert 'name="values.tone" value="kind" data-key="c" required' in html
    assert "ann2" not in html and "checked" not in html

    posted = c.post(
        f"/queues/{graded.pk}/items/{claim.item.key}/label/",
        {"verdict": "correct", "values.faithfulness": "4", "values.tone": "kind"},
    )
    assert posted.status_code == 302
    assert sorted(CriterionLabel.objects.values_list("annotator__username", "name", "value")) == [
        ("ann1", "faithfulness", "4"),
        ("ann1", "tone", "kind"),
        ("ann2", "faithfulness", "2"),
        ("ann2", "tone", "rude"),
    ]
    item = QueueItem.objects.get()
    assert item.status == "disputed"

    adj = client_for(pool["adj"])
    page = adj.get(f"/queues/{graded.pk}/adjudicate/").content.decode()
    assert "Disputed: <strong>faithfulness</strong>, <strong>tone</strong>." in page
    assert "ann1: <strong>4</strong> · ann2: <strong>2</strong>" in page
    assert 'name="values.tone" value="neutral" data-key="b" required' in page
    assert '<input type="radio" name="verdict" value="correct"> <kbd>1</kbd>' in page  # the verdicts agree

    adj.post(
        f"/queues/{graded.pk}/items/{item.key}/adjudicate/",
        {"values.faithfulness": "3", "values.tone": "neutral", "reason": "both partly right"},
    )
    item.refresh_from_db()
    assert item.status == "adjudicated"
    assert sorted(CriterionAdjudication.objects.values_list("name", "value")) == [
        ("faithfulness", "3"),
        ("tone", "neutral"),
    ]


@pytest.mark.django_db
def test_my_values_are_changed_explicitly_and_the_confirm_form_keeps_them(graded, pool):
    claim = queue_next(queue=graded, annotator=pool["ann1"])
    assert claim is not None
    key = claim.item.key
    c = client_for(pool["ann1"])
    c.post(
        f"/queues/{graded.pk}/items/{key}/label/",
        {"verdict": "correct", "values.faithfulness": "4", "values.tone": "kind"},
    )

    mine = c.get(f"/queues/{graded.pk}/items/{key}/").content.decode()
    assert "faithfulness <strong>4</strong>, tone <strong>kind</strong>" in mine
    assert 'name="values.faithfulness" value="4" data-key="4" required checked' in mine

    # From a stale page (htmx), other values without `change`: 409 and a confirm form that resends them.
    stale = c.post(
        f"/queues/{graded.pk}/items/{key}/label/",
        {"verdict": "correct", "values.faithfulness": "2", "values.tone": "kind"},
        HTTP_HX_REQUEST="true",
    )
    html = stale.content.decode()
    assert stale.status_code == 409
    assert "You labelled this correct with other criterion values; change them?" in html
    assert '<input type="hidden" name="values.faithfulness" value="2">' in html
    assert sorted(CriterionLabel.objects.values_list("name", "value")) == [("faithfulness", "4"), ("tone", "kind")]

    c.post(
        f"/queues/{graded.pk}/items/{key}/label/",
        {"verdict": "correct", "change": "true", "values.faithfulness": "2", "values.tone": "kind"},
    )
    assert sorted(CriterionLabel.objects.values_list("name", "value")) == [("faithfulness", "2"), ("tone", "kind")]
    from annotation.models import CriterionLabelEvent

    assert list(CriterionLabelEvent.objects.order_by("id").values_list("name", "old_value", "new_value")) == [
        ("faithfulness", "", "4"),
        ("tone", "", "kind"),
        ("faithfulness", "4", "2"),
    ]


@pytest.mark.django_db
def test_the_stats_page_lists_each_criterion(graded, pool):
    item = queue_next(queue=graded, annotator=pool["ann1"])
    assert item is not None and queue_next(queue=graded, annotator=pool["ann2"]) is not None
    for who, value in (("ann1", "4"), ("ann2", "2")):
        label_submit(
            queue=graded,
            item_id=item.item.pk,
            annotator=pool[who],
            verdict="correct",
            values={"faithfulness": value, "tone": "kind"},
        )
    html = client_for(pool["eng"]).get(f"/queues/{graded.pk}/stats/").content.decode()
    assert "<h2>Criteria</h2>" in html
    assert '<tr><th scope="row">faithfulness</th><td>ordinal</td><td>1</td><td>0.000</td>' in html
