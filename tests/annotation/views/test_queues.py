"""The queue pages: my queues, labelling (htmx fragment after submit), adjudication, statistics, a new queue."""

import pytest

from annotation.models import Answer, HumanLabel, Queue, QueueItem
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from tests.annotation.views.conftest import client_for


@pytest.mark.django_db
def test_my_queues_shows_progress_bars(make_queue, pool):
    queue = make_queue(4)
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct")
    page = client_for(pool["ann1"]).get("/queues/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'aria-label="my labels" aria-valuenow="25"' in html and "1 labelled by me" in html
    assert f'href="/queues/{queue.pk}/label/"' in html and "Statistics" not in html
    assert ">Queues</a>" in html
    assert "not in the pool" in client_for(pool["eng"]).get("/queues/").content.decode()
    assert client_for(pool["ann3"]).get("/queues/").content.decode().count("<tr data-queue") == 0


@pytest.mark.django_db
def test_labelling_page_is_blind_and_submits_to_the_next_item(make_queue, pool):
    queue = make_queue(2)
    # ann2 labels first, with a rationale that must never reach ann1's page.
    claim = queue_next(queue=queue, annotator=pool["ann2"])
    label_submit(
        queue=queue, item_id=claim.item.pk, annotator=pool["ann2"], verdict="incorrect", rationale="SECRET-RATIONALE"
    )
    c = client_for(pool["ann1"])
    page = c.get(f"/queues/{queue.pk}/label/")
    html = page.content.decode()
    assert page.status_code == 200
    for secret in ("SECRET-RATIONALE", "rag-secret-system", "run-secret-", "ann2"):
        assert secret not in html
    item_id = claim.item.key  # fullest first: ann1 is handed the item ann2 labelled
    assert f'data-item="{item_id}"' in html and "Correct when it states the expected answer." in html
    assert "js/labelling/main.js" in html
    fragment = c.post(
        f"/queues/{queue.pk}/items/{item_id}/label/",
        {"verdict": "correct", "rationale": "ok", "active_seconds": "4.5"},
        HTTP_HX_REQUEST="true",
    )
    body = fragment.content.decode()
    assert fragment.status_code == 200 and body.startswith('<section id="item"') and "<html" not in body
    assert f'data-item="{item_id}"' not in body and "data-item=" in body
    label = HumanLabel.objects.get(annotator=pool["ann1"])
    assert (label.verdict, label.rationale, label.active_seconds, label.source) == ("correct", "ok", 4.5, "queue")
    other = QueueItem.objects.exclude(key=item_id).get()
    bad = c.post(f"/queues/{queue.pk}/items/{other.key}/label/", {"verdict": ""}, HTTP_HX_REQUEST="true")
    said = "The label was not recorded: verdict must be one of correct, incorrect, not &#x27;&#x27;."
    assert said in bad.content.decode() and f'data-item="{other.key}"' in bad.content.decode()
    c.post(f"/queues/{queue.pk}/items/{other.key}/label/", {"verdict": "incorrect"})
    done = c.get(f"/queues/{queue.pk}/label/")
    assert "Nothing left for you in this queue" in done.content.decode()
    assert client_for(pool["ann3"]).get(f"/queues/{queue.pk}/label/").status_code == 403


@pytest.mark.django_db
def test_adjudication_page_shows_both_labels_and_records_the_decision(make_queue, pool):
    queue = make_queue(1)
    for name, verdict in (("ann1", "correct"), ("ann2", "incorrect")):
        claim = queue_next(queue=queue, annotator=pool[name])
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict, rationale=f"why {name}")
    c = client_for(pool["adj"])
    html = c.get(f"/queues/{queue.pk}/adjudicate/").content.decode()
    assert "why ann1" in html and "why ann2" in html and "1 disputed item left" in html
    assert "rag-secret-system" not in html
    response = c.post(
        f"/queues/{queue.pk}/items/{claim.item.key}/adjudicate/", {"verdict": "incorrect", "reason": "no"}
    )
    assert response.status_code == 302
    assert Answer.objects.get(pk=claim.item.answer_id).final_verdict == "incorrect"
    assert "No disputed items left" in c.get(f"/queues/{queue.pk}/adjudicate/").content.decode()
    assert client_for(pool["ann1"]).get(f"/queues/{queue.pk}/adjudicate/").status_code == 403


@pytest.mark.django_db
def test_stats_page_says_how_long_the_labels_left_take(make_queue, pool):
    queue = make_queue(3)
    for name, seconds in (("ann1", 20.0), ("ann2", 40.0)):
        claim = queue_next(queue=queue, annotator=pool[name])
        assert claim is not None
        label_submit(
            queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct", active_seconds=seconds
        )
    html = client_for(pool["adj"]).get(f"/queues/{queue.pk}/stats/").content.decode()
    # 3 items x 2 labels - 2 in = 4 left; the team's median of 20 and 40 is 30 s
    sentence = "The 4 labels left need about 2 min at the team&#x27;s median (30 s a label)."
    assert f'<p id="projection" data-testid="projection"><strong>{sentence}</strong></p>' in html
    assert '<tr data-person="ann2"><td>ann2</td><td class="nowrap">1 (1)</td>' in html
    assert f"python manage.py label_time --queue {queue.pk} --json" in html


@pytest.mark.django_db
def test_stats_page_has_the_confusion_matrix(make_queue, pool):
    queue = make_queue(2)
    for name in ("ann1", "ann2"):
        while (claim := queue_next(queue=queue, annotator=pool[name])) is not None:
            label_submit(
                queue=queue,
                item_id=claim.item.pk,
                annotator=pool[name],
                verdict="correct" if name == "ann1" or claim.item.position == 0 else "incorrect",
            )
    page = client_for(pool["eng"]).get(f"/queues/{queue.pk}/stats/")
    html = page.content.decode()
    assert page.status_code == 200
    assert '<table class="confusion"' in html and "<th>correct</th><td>1</td><td>1</td>" in html
    assert "ann1/ann2" in html and "Disagreements (1)" in html
    assert client_for(pool["ann1"]).get(f"/queues/{queue.pk}/stats/").status_code == 403


@pytest.mark.django_db
def test_new_queue_form(make_run, pool):
    run_id = make_run(6)
    c = client_for(pool["eng"])
    assert c.get("/queues/new/").status_code == 200
    bad = c.post("/queues/new/", {"name": "", "run_id": run_id, "annotators": ["ann1"], "overlap": "2"})
    assert "must be a non-empty string" in bad.content.decode() and Queue.objects.count() == 0
    ok = c.post(
        "/queues/new/", {"name": "n", "run_id": run_id, "annotators": ["ann1", "ann2"], "overlap": "2", "sample": "3"}
    )
    assert ok.status_code == 302 and QueueItem.objects.count() == 3


@pytest.mark.django_db
def test_the_home_page_sends_an_annotator_to_their_queues_with_counts(make_queue, pool):
    queue = make_queue(4)
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict="correct")

    html = client_for(pool["ann1"]).get("/").content.decode()
    other = client_for(pool["ann3"]).get("/").content.decode()

    assert (
        f'<tr data-queue="{queue.pk}"><td>q</td><td>1</td><td>3</td>'
        f'\n    <td><a class="button primary" href="/queues/{queue.pk}/label/">Label</a>'
    ) in html
    assert 'id="my-queues"' not in other


@pytest.mark.django_db
def test_the_labelling_page_says_how_long_the_item_is_held(make_queue, pool):
    from annotation.views.queues import lease_text

    queue = make_queue(1)  # the default lease: 30 minutes
    html = client_for(pool["ann1"]).get(f"/queues/{queue.pk}/label/").content.decode()
    assert ">held for 29 min</time>" in html or ">held for 30 min</time>" in html
    assert "lease until" not in html
    from datetime import timedelta

    assert [lease_text(timedelta(seconds=s)) for s in (-1, 30, 60, 29 * 60 + 59, 3 * 3600 + 300)] == [
        "lease ran out: the item may go to someone else",
        "held for less than a minute",
        "held for 1 min",
        "held for 29 min",
        "held for 3 h 5 min",
    ]


@pytest.mark.django_db
def test_an_adjudicator_is_not_offered_the_disputes_they_labelled(make_queue, pool, make_user):
    """A user who is both annotator and adjudicator labels the item; their disagreement with ann1 is
    for another adjudicator to settle, so their queue list offers no "Adjudicate (1)"."""
    dual = make_user("dual", "annotator", "adjudicator")
    queue = make_queue(1, annotators=("ann1", "dual"))
    for user, verdict in ((pool["ann1"], "correct"), (dual, "incorrect")):
        claim = queue_next(queue=queue, annotator=user)
        label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict)
    assert QueueItem.objects.get(queue=queue).status == QueueItem.DISPUTED

    mine = client_for(dual).get("/queues/").content.decode()
    other = client_for(pool["adj"]).get("/queues/").content.decode()

    assert "Adjudicate (" not in mine and "1 disputed, none yours to settle" in mine
    assert f'<a href="/queues/{queue.pk}/adjudicate/">Adjudicate (1)</a>' in other
    assert "No disputed items left" in client_for(dual).get(f"/queues/{queue.pk}/adjudicate/").content.decode()


@pytest.mark.django_db
def test_labelling_pages_are_never_cached_and_a_stale_second_label_asks_first(make_queue, pool):
    from annotation.models import LabelEvent

    queue = make_queue(2)
    c = client_for(pool["ann1"])
    page = c.get(f"/queues/{queue.pk}/label/")
    assert "no-store" in page["Cache-Control"]
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    assert claim is not None
    item = claim.item
    label_submit(queue=queue, item_id=item.pk, annotator=pool["ann1"], verdict="correct", rationale="first")
    url = f"/queues/{queue.pk}/items/{item.key}/label/"

    asked = c.post(url, {"verdict": "incorrect"}, HTTP_HX_REQUEST="true")
    body = asked.content.decode()
    assert asked.status_code == 409 and "no-store" in asked["Cache-Control"]
    assert "You labelled this correct; change to incorrect?" in body and 'name="change" value="true"' in body
    plain = c.post(url, {"verdict": "incorrect"})
    assert plain.status_code == 302 and plain["Location"] == f"/queues/{queue.pk}/items/{item.key}/"
    assert (HumanLabel.objects.get().verdict, LabelEvent.objects.count()) == ("correct", 1)

    mine = c.get(plain["Location"])
    assert mine.status_code == 200 and "no-store" in mine["Cache-Control"]
    assert "you labelled this correct; change to incorrect?" in mine.content.decode()
    changed = c.post(url, {"verdict": "incorrect", "change": "true"})
    assert changed.status_code == 302
    assert (HumanLabel.objects.get().verdict, HumanLabel.objects.get().rationale) == ("incorrect", "first")
    assert LabelEvent.objects.count() == 2


@pytest.mark.django_db
def test_flags_and_skips_show_on_the_statistics_page_and_never_on_another_annotators_page(make_queue, pool):
    from annotation.services.claims import item_skip
    from annotation.services.labelling import item_flag

    queue = make_queue(1, annotators=("ann1", "ann2", "ann3"))
    claim = queue_next(queue=queue, annotator=pool["ann1"])
    assert claim is not None
    item = claim.item
    item_flag(queue=queue, item_id=item.pk, annotator=pool["ann1"], reason="FLAG-gold-is-wrong")
    item_skip(queue=queue, item_id=item.pk, annotator=pool["ann1"], reason="SKIP-needs-pricing")
    stats = client_for(pool["eng"]).get(f"/queues/{queue.pk}/stats/").content.decode()
    assert "FLAG-gold-is-wrong" in stats and "SKIP-needs-pricing" in stats and "ann1" in stats
    page = client_for(pool["ann2"]).get(f"/queues/{queue.pk}/label/").content.decode()
    assert f'data-item="{item.key}"' in page
    for secret in ("FLAG-gold-is-wrong", "SKIP-needs-pricing", "ann1"):
        assert secret not in page
    assert client_for(pool["ann2"]).get(f"/queues/{queue.pk}/stats/").status_code == 403


@pytest.mark.django_db
def test_stats_page_shows_multi_rater_figures_with_overlap_3(make_queue, pool):
    queue = make_queue(2, overlap=3, annotators=("ann1", "ann2", "ann3"))
    for row in (("correct", "correct", "incorrect"), ("incorrect", "incorrect", "incorrect")):
        for name, verdict in zip(("ann1", "ann2", "ann3"), row, strict=True):
            claim = queue_next(queue=queue, annotator=pool[name])
            assert claim is not None
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict=verdict)
    html = client_for(pool["eng"]).get(f"/queues/{queue.pk}/stats/").content.decode()
    assert "All 3 labels of an item at once" in html
    assert "n = 2 items labelled by 3 annotators" in html
    # Fleiss: P_i = 1/3, 1 (mean 2/3); p_correct = 2/6, P_e = 1/9 + 4/9 = 5/9; kappa = (2/3 - 5/9) / (4/9) = 0.25.
    assert "Fleiss' kappa <strong>0.250</strong>" in html
    assert "so their intervals claim more precision than the labels hold" in html


@pytest.mark.django_db
def test_stats_page_with_overlap_2_has_no_multi_rater_section(make_queue, pool):
    queue = make_queue(1)
    for name in ("ann1", "ann2"):
        claim = queue_next(queue=queue, annotator=pool[name])
        assert claim is not None
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct")
    html = client_for(pool["eng"]).get(f"/queues/{queue.pk}/stats/").content.decode()
    assert 'data-testid="multi-rater"' not in html
