"""Browser: a day of labelling. Back then Enter never relabels silently; skip with a reason hands the item to
the other annotator; previous lists my label and changes it only explicitly; the guideline is open on the
first item and after a new version; the progress counter counts; the next item is preloaded unclaimed."""

import pytest

from annotation.models import Assignment, HumanLabel, LabelEvent, QueueItem
from tests.annotation.conftest import make_run  # noqa: F401  (the fixture, shared with the annotation tests)
from tests.e2e.shots import SCREENSHOTS

PASSWORD = "pw-" + "x" * 8
SHOTS = SCREENSHOTS / "labday"
FORM = "form[data-keyboard-form]"


@pytest.fixture
def day_queue(make_run, make_user):
    from annotation.services.queues import queue_create

    for name in ("alice", "bob"):
        make_user(name, "annotator", password=PASSWORD)
    return queue_create(
        name="labelling day",
        annotators=["alice", "bob"],
        overlap=2,
        run_id=make_run(4),
        rubric="Correct when the answer states the expected duration.\nPartial answers are incorrect.",
        seed=2,
    )


def _page(browser, login, name, width=1280):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    login(page, name, PASSWORD)
    return context, page


def _item(page):
    return page.get_attribute(FORM, "data-item")


def _wait_new_item(page, old):
    page.wait_for_function(
        "(old) => { const f = document.querySelector('form[data-keyboard-form]'); return f && f.dataset.item !== old; }",
        arg=old,
    )


def _label(page, key, comment=None):
    old = _item(page)
    page.keyboard.press(key)
    if comment:
        page.keyboard.press("r")
        page.keyboard.type(comment)
    page.keyboard.press("Enter")
    _wait_new_item(page, old)
    return old


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_back_then_enter_does_not_silently_relabel(browser, live_server, login, day_queue):
    ctx, page = _page(browser, login, "alice")
    label_url = f"{live_server.url}/queues/{day_queue.pk}/label/"
    response = page.goto(label_url)
    assert "no-store" in response.headers["cache-control"]
    first = _label(page, "1", "states the duration")
    page.goto(f"{live_server.url}/queues/")
    page.go_back()
    page.wait_for_selector(FORM)
    # Back shows the item alice holds now, never the one she labelled as if it were new.
    assert _item(page) != first
    held = _item(page)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    _wait_new_item(page, held)
    assert HumanLabel.objects.get(answer__queue_items__key=first).verdict == "correct"
    assert LabelEvent.objects.filter(answer__queue_items__key=first).count() == 1

    # A second tab still shows the item alice holds; she labels it in the first tab, then presses 2 and
    # Enter in the stale one: the server asks before it changes anything, and changes it only when told.
    stale = ctx.new_page()
    stale.goto(label_url)
    assert _item(stale) == _item(page)
    third = _label(page, "1", "third is right")
    stale.keyboard.press("2")
    with stale.expect_response(lambda r: r.url.endswith(f"/items/{third}/label/")) as answer:
        stale.keyboard.press("Enter")
    assert answer.value.status == 409
    stale.wait_for_selector("[data-confirm-form]")
    assert "You labelled this correct; change to incorrect?" in stale.inner_text("[data-confirm-form]")
    assert HumanLabel.objects.get(answer__queue_items__key=third).verdict == "correct"
    stale.screenshot(path=f"{SHOTS}/label-confirm-change-1280.png", full_page=True)
    stale.click("[data-confirm-form] button[type=submit]")
    stale.wait_for_selector(FORM)
    assert "Your label changed to incorrect" in stale.inner_text("#item")
    label = HumanLabel.objects.get(answer__queue_items__key=third)
    assert (label.verdict, label.rationale) == ("incorrect", "third is right")
    assert list(
        LabelEvent.objects.filter(answer__queue_items__key=third)
        .order_by("id")
        .values_list("old_verdict", "new_verdict")
    ) == [("", "correct"), ("correct", "incorrect")]
    ctx.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_skip_with_a_reason_hands_the_item_to_the_other_annotator(browser, live_server, login, make_user, make_run):
    for name in ("alice", "bob"):
        make_user(name, "annotator", password=PASSWORD)
    from annotation.services.queues import queue_create

    make_user("carol", "annotator", password=PASSWORD)
    one = queue_create(name="one item", annotators=["alice", "bob", "carol"], overlap=2, run_id=make_run(1))
    label_url = f"{live_server.url}/queues/{one.pk}/label/"
    actx, alice = _page(browser, login, "alice")
    bctx, bob = _page(browser, login, "bob")
    cctx, carol = _page(browser, login, "carol")
    alice.goto(label_url)
    bob.goto(label_url)
    item = _item(alice)
    assert _item(bob) == item  # fullest first: both hold it, the item is full
    alice.keyboard.press("s")
    assert alice.evaluate("document.activeElement.id") == "skip-reason"
    alice.keyboard.type("needs pricing knowledge")
    alice.keyboard.press("Enter")
    alice.wait_for_selector("text=Nothing left for you in this queue")
    assert "Skipped: the item goes back to the pool" in alice.inner_text("#item")
    row = Assignment.objects.get(item__key=item, annotator__username="alice")
    assert (row.state, row.skip_reason) == ("skipped", "needs pricing knowledge")
    carol.goto(label_url)
    assert _item(carol) == item
    assert "needs pricing knowledge" not in carol.content() and "alice" not in carol.content()
    alice.screenshot(path=f"{SHOTS}/label-after-skip-1280.png", full_page=True)
    for ctx in (actx, bctx, cctx):
        ctx.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_previous_lists_my_label_and_changes_it_only_explicitly(browser, live_server, login, day_queue):
    ctx, page = _page(browser, login, "alice")
    page.goto(f"{live_server.url}/queues/{day_queue.pk}/label/")
    first = _label(page, "2", "ALICE-misses-the-duration")
    page.keyboard.press("p")
    assert page.is_visible("details[data-previous] a")
    assert "you: incorrect" in page.inner_text("details[data-previous]")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the focus is on the first link: my latest label
    assert f"/items/{first}/" in page.url
    assert page.inner_text(".my-verdict") == "incorrect"
    assert page.input_value("#rationale") == "ALICE-misses-the-duration"
    page.check("input[name=verdict][value=correct]")
    with page.expect_navigation():
        page.click("text=Change my label")
    assert "Your label changed to correct" in page.inner_text(".messages")
    assert HumanLabel.objects.get(answer__queue_items__key=first).verdict == "correct"
    assert LabelEvent.objects.filter(answer__queue_items__key=first).count() == 2
    ctx.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_guideline_open_on_the_first_item_and_after_a_new_version_and_the_counter_counts(
    browser, live_server, login, day_queue
):
    from annotation.services.queues import queue_rubric_update

    label_url = f"{live_server.url}/queues/{day_queue.pk}/label/"
    for width in (1280, 800):
        ctx, page = _page(browser, login, "bob", width=width)
        page.goto(label_url)
        assert page.evaluate("document.querySelector('details[data-guideline]').open") is True
        assert "read it before your first item" in page.inner_text("details[data-guideline] summary")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=f"{SHOTS}/label-first-item-guideline-{width}.png", full_page=True)
        ctx.close()
    ctx, page = _page(browser, login, "alice")
    page.goto(label_url)
    assert page.inner_text("[data-progress]") == "You: 0 done · 4 left in this queue"
    assert page.evaluate("document.querySelector('details[data-guideline]').open") is True
    _label(page, "1")
    assert page.evaluate("document.querySelector('details[data-guideline]').open") is False
    assert page.inner_text("[data-progress]") == "You: 1 done · 3 left in this queue"
    queue_rubric_update(queue=day_queue, text="Partial answers count as correct from now on.")
    _label(page, "2")
    assert page.evaluate("document.querySelector('details[data-guideline]').open") is True
    summary = page.inner_text("details[data-guideline] summary")
    assert "version 2" in summary and "changed since your last label" in summary
    assert "Partial answers count as correct" in page.inner_text("details[data-guideline]")
    assert page.inner_text("[data-progress]") == "You: 2 done · 2 left in this queue"
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.keyboard.press("r")
        page.keyboard.type("A comment beside the verdict")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=f"{SHOTS}/label-comment-guideline-changed-{width}.png", full_page=True)
        page.fill("#rationale", "")
        page.keyboard.press("Escape")
    ctx.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_next_item_is_preloaded_without_a_claim(browser, live_server, login, day_queue):
    ctx, page = _page(browser, login, "alice")
    page.goto(f"{live_server.url}/queues/{day_queue.pk}/label/")
    preloaded = page.get_attribute("#item template[data-preloaded]", "data-preview-item") or page.evaluate(
        "document.querySelector('#item template[data-preloaded]').content.firstElementChild.dataset.previewItem"
    )
    held = _item(page)
    assert preloaded != held
    assert list(Assignment.objects.filter(annotator__username="alice").values_list("item__key", "state")) == [
        (held, "claimed")
    ]
    assert QueueItem.objects.get(key=preloaded).taken == 0
    # While the label is on its way the preloaded item shows; then the server's answer, the same item, claimed.
    page.route("**/label/", lambda route: (page.wait_for_timeout(600), route.continue_()))
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#preloaded [data-preview-item]")
    assert page.get_attribute("#preloaded [data-preview-item]", "data-preview-item") == preloaded
    assert "Loading your next item" in page.inner_text("#preloaded")
    _wait_new_item(page, held)
    assert _item(page) == preloaded and page.is_hidden("#preloaded")
    assert Assignment.objects.get(annotator__username="alice", state="claimed").item.key == preloaded
    ctx.close()
