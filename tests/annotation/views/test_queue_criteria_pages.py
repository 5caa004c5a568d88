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
