"""Browser: two annotators in two browser contexts label the same item blind, keyboard only; the adjudicator
resolves the disagreement, keyboard only."""

import pytest

from annotation.models import Answer, HumanLabel, QueueItem
from tests.annotation.conftest import make_run  # noqa: F401  (the fixture, shared with the annotation tests)
from tests.e2e.shots import SCREENSHOTS

PASSWORD = "pw-" + "x" * 8


@pytest.fixture
def one_item_queue(make_run, make_user):
    from annotation.services.queues import queue_create

    for name in ("alice", "bob"):
        make_user(name, "annotator", password=PASSWORD)
    make_user("judith", "adjudicator", password=PASSWORD)
    run_id = make_run(1)
    return queue_create(
        name="blind pair",
        annotators=["alice", "bob"],
        overlap=2,
        run_id=run_id,
        rubric="Correct when the answer states the expected duration.",
        seed=2,
    )


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_two_annotators_blind_then_adjudicator_resolves_keyboard_only(
    browser, live_server, login, one_item_queue, screenshot_dir
):
    queue = one_item_queue
    label_url = f"{live_server.url}/queues/{queue.pk}/label/"
    alice_ctx, bob_ctx, judge_ctx = browser.new_context(), browser.new_context(), browser.new_context()
    alice, bob, judith = alice_ctx.new_page(), bob_ctx.new_page(), judge_ctx.new_page()
    login(alice, "alice", PASSWORD)
    login(bob, "bob", PASSWORD)

    # Both open the same item at once, each in their own browser.
    alice.goto(label_url)
    bob.goto(label_url)
    alice.wait_for_selector("form[data-keyboard-form]")
    bob.wait_for_selector("form[data-keyboard-form]")
    item_id = alice.get_attribute("form[data-keyboard-form]", "data-item")
    assert bob.get_attribute("form[data-keyboard-form]", "data-item") == item_id
    assert "How long does plan 0 last?" in alice.inner_text(".question")

    # The page renews the lease while it is open (every 5 minutes; here at once).
    from annotation.models import Assignment

    before = Assignment.objects.get(item__key=item_id, annotator__username="alice").lease_expires_at
    with alice.expect_response(lambda r: r.url.endswith("/renew/") and r.status == 200):
        alice.evaluate("window.evalappLabelling.renew()")
    assert Assignment.objects.get(item__key=item_id, annotator__username="alice").lease_expires_at > before

    # alice: 1 (correct), r, a rationale, Enter.
    alice.keyboard.press("?")
    assert alice.is_visible("#kbd-help")
    alice.keyboard.press("?")
    alice.keyboard.press("1")
    assert alice.is_checked("input[name=verdict][value=correct]")
    alice.keyboard.press("r")
    alice.keyboard.type("ALICE-SAYS-zero-days-is-right")
    alice.keyboard.press("Enter")
    alice.wait_for_selector("text=Nothing left for you in this queue")
    label = HumanLabel.objects.get(annotator__username="alice")
    assert label.rationale == "ALICE-SAYS-zero-days-is-right" and label.active_seconds is not None

    # bob's page, even reloaded after alice's submit, shows nothing of her label.
    bob.reload()
    bob.wait_for_selector("form[data-keyboard-form]")
    html = bob.content()
    assert "ALICE-SAYS" not in html and "alice" not in html and "rag-secret-system" not in html
    bob.keyboard.press("2")
    bob.keyboard.press("r")
    bob.keyboard.type("BOB-disagrees")
    bob.keyboard.press("Enter")
    bob.wait_for_selector("text=Nothing left for you in this queue")
    bob.screenshot(path=str(screenshot_dir / "queues-bob-done.png"))
    item = QueueItem.objects.get(key=item_id)
    assert (item.status, item.done) == ("disputed", 2)

    # The adjudicator sees both labels side by side and resolves it with the keyboard.
    login(judith, "judith", PASSWORD)
    judith.goto(f"{live_server.url}/queues/{queue.pk}/adjudicate/")
    judith.wait_for_selector("form[data-keyboard-form]")
    labels = judith.inner_text(".labels")
    assert "ALICE-SAYS-zero-days-is-right" in labels and "BOB-disagrees" in labels
    judith.screenshot(path=str(screenshot_dir / "queues-adjudicate.png"))
    judith.keyboard.press("2")
    judith.keyboard.press("r")
    judith.keyboard.type("the expected answer is 0 days; the answer says otherwise")
    with judith.expect_navigation():
        judith.keyboard.press("Enter")
    judith.wait_for_selector("text=No disputed items left")
    answer = Answer.objects.get(pk=item.answer_id)
    assert (answer.final_verdict, answer.final_source) == ("incorrect", "adjudication")
    assert QueueItem.objects.get(key=item_id).status == "adjudicated"
    for ctx in (alice_ctx, bob_ctx, judge_ctx):
        ctx.close()


@pytest.fixture
def three_rater_queue(make_run, make_user):
    from annotation.services.claims import queue_next
    from annotation.services.labelling import label_submit
    from annotation.services.queues import queue_create

    annotators = {name: make_user(name, "annotator", password=PASSWORD) for name in ("ann1", "ann2", "ann3")}
    make_user("erin", "engineer", password=PASSWORD)
    queue = queue_create(
        name="three raters",
        annotators=list(annotators),
        overlap=3,
        run_id=make_run(6),
        rubric="Correct when the answer states the expected duration.",
        seed=2,
    )
    rows = [
        ("correct", "correct", "correct"),
        ("correct", "correct", "incorrect"),
        ("incorrect", "incorrect", "incorrect"),
        ("correct", "incorrect", "incorrect"),
        ("correct", "correct", "correct"),
        ("incorrect", "incorrect", "correct"),
    ]
    for row in rows:
        for user, verdict in zip(annotators.values(), row, strict=True):
            claim = queue_next(queue=queue, annotator=user)
            assert claim is not None
            label_submit(queue=queue, item_id=claim.item.pk, annotator=user, verdict=verdict)
    return queue


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_stats_page_shows_multi_rater_agreement_under_the_pairwise_figures(
    page, live_server, login, three_rater_queue, screenshot_dir
):

    from axe_playwright_python.sync_playwright import Axe

    from tests.e2e.test_accessibility import WCAG_AA

    shots = SCREENSHOTS / "agree"
    shots.mkdir(parents=True, exist_ok=True)
    login(page, "erin", PASSWORD)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/queues/{three_rater_queue.pk}/stats/")
        section = page.locator('[data-testid="multi-rater"]')
        assert section.is_visible()
        text = section.inner_text()
        assert "All 3 labels of an item at once" in text
        assert "n = 6 items labelled by 3 annotators" in text
        assert "claim more precision than the labels hold" in text
        # It comes after the pairwise summary and before the confusion matrix.
        order = page.evaluate("() => [...document.querySelectorAll('h2, h3')].map(h => h.textContent.trim())")
        assert order.index("Agreement between annotators") < order.index("All 3 labels of an item at once")
        assert order.index("All 3 labels of an item at once") < order.index("Confusion matrix")
        assert page.evaluate("() => document.documentElement.scrollWidth - innerWidth") <= 0
        violations = Axe().run(page, options=WCAG_AA).response["violations"]
        assert [v["id"] for v in violations] == []
        page.screenshot(path=str(shots / f"queue-stats-multi-rater-{width}.png"), full_page=True)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_stats_page_warns_that_a_small_queue_cannot_be_trusted_to_cover(
    page, live_server, login, three_rater_queue, screenshot_dir
):
    login(page, "erin", PASSWORD)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/queues/{three_rater_queue.pk}/stats/")
        warning = page.locator("p.warn", has_text="at least 30 are needed")
        assert warning.count() == 1
        text = warning.inner_text()
        assert text.startswith("only 18 item(s) (at least 30 are needed)")
        assert "Label more items" in text and "policy lower_bound" in text
        assert page.evaluate("() => document.documentElement.scrollWidth - innerWidth") <= 0
        page.screenshot(path=str(screenshot_dir / f"queue-stats-coverage-{width}.png"), full_page=True)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_stats_page_pages_its_disagreements_and_keeps_the_filter(
    page, live_server, login, three_rater_queue, screenshot_dir, monkeypatch
):
    from axe_playwright_python.sync_playwright import Axe

    from tests.e2e.test_accessibility import WCAG_AA

    monkeypatch.setattr("annotation.views.queues.DISAGREEMENTS_PER_PAGE", 2)
    stratum = three_rater_queue.items.order_by("pk").first().stratum
    login(page, "erin", PASSWORD)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/queues/{three_rater_queue.pk}/stats/")
        assert page.locator("#h-dis").inner_text() == "Disagreements (3)"
        assert page.locator('[data-testid="disagreement-range"]').inner_text() == "1–2 of 3"
        assert page.locator('[data-testid="disagreement"]').count() == 2
        assert page.evaluate("() => document.documentElement.scrollWidth - innerWidth") <= 0
        violations = Axe().run(page, options=WCAG_AA).response["violations"]
        assert [v["id"] for v in violations] == []
        page.screenshot(path=str(screenshot_dir / f"queue-stats-disagreements-{width}.png"), full_page=True)
        page.click('nav[aria-label="disagreement pages"] a[rel="next"]')
        assert page.locator('[data-testid="disagreement-range"]').inner_text() == "3–3 of 3"
        assert page.locator('[data-testid="disagreement"]').count() == 1
        page.select_option('[data-testid="disagreement-filters"] select[name="stratum"]', stratum)
        page.click('[data-testid="disagreement-filters"] button')
        assert f"stratum={stratum}" in page.url
        for href in page.locator('nav[aria-label="disagreement pages"] a').evaluate_all("els => els.map(e => e.href)"):
            assert f"stratum={stratum}" in href
