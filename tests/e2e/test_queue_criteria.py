"""Browser: labelling an item on two criteria by keyboard alone. c reaches the first criterion, a digit
picks the ordinal scale's value and moves on, a letter picks the categorical value and hands the keys
back to the verdict, 1 and Enter send it all in one submit; the values are written with the verdict."""

import pytest

from annotation.models import CriterionLabel, HumanLabel
from tests.annotation.conftest import make_run  # noqa: F401  (the fixture, shared with the annotation tests)

PASSWORD = "pw-" + "x" * 8
FORM = "form[data-keyboard-form]"


@pytest.fixture
def graded_queue(make_run, make_user):
    from annotation.services.criteria import criterion_set
    from annotation.services.queues import queue_create

    for name in ("alice", "bob"):
        make_user(name, "annotator", password=PASSWORD)
    run_id = make_run(3)
    criterion_set(
        dataset_name="support-q",
        name="faithfulness",
        kind="ordinal",
        values=["1", "2", "3", "4", "5"],
        guideline="5: every claim is in the gold passage. 3: about half. 1: none is.",
    )
    criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    return queue_create(
        name="graded day",
        annotators=["alice", "bob"],
        run_id=run_id,
        rubric="Grade faithfulness to the gold passage and the tone.",
        seed=2,
        criteria=["faithfulness", "tone"],
        tolerance={"faithfulness": 1},
    )


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_two_criteria_and_the_verdict_by_keyboard(browser, live_server, login, graded_queue, screenshot_dir):
    for width in (1280, 800):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        login(page, "alice" if width == 1280 else "bob", PASSWORD)
        page.goto(f"{live_server.url}/queues/{graded_queue.pk}/label/")
        page.wait_for_selector(FORM)
        assert page.locator("[data-testid=guideline-faithfulness]").is_visible()
        assert page.locator("[data-testid=guideline-tone]").count() == 0  # none given, none shown
        page.screenshot(path=str(screenshot_dir / f"queue-criteria-{width}.png"), full_page=True)
        if width == 800:
            context.close()
            continue
        item = page.get_attribute(FORM, "data-item")
        page.keyboard.press("c")
        assert page.evaluate("document.activeElement.name") == "values.faithfulness"
        page.keyboard.press("4")
        # The pick moved the focus on to tone, where letters are its values.
        assert page.evaluate("document.activeElement.name") == "values.tone"
        page.keyboard.press("c")
        # Past the last criterion the keys are the verdict's again: 1 is correct, not faithfulness 1.
        assert page.evaluate("document.activeElement.matches('form[data-keyboard-form]')")
        page.keyboard.press("1")
        assert page.is_checked("input[name='values.faithfulness'][value='4']")
        assert page.is_checked("input[name='values.tone'][value='kind']")
        assert page.is_checked("input[name=verdict][value=correct]")
        assert not page.is_checked("input[name='values.faithfulness'][value='1']")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(old) => { const f = document.querySelector('form[data-keyboard-form]'); return f && f.dataset.item !== old; }",
            arg=item,
        )
        context.close()

    assert list(HumanLabel.objects.values_list("annotator__username", "verdict")) == [("alice", "correct")]
    assert sorted(CriterionLabel.objects.values_list("annotator__username", "name", "value", "source")) == [
        ("alice", "faithfulness", "4", "queue"),
        ("alice", "tone", "kind", "queue"),
    ]


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_disputed_criterion_is_settled_on_the_adjudication_page(
    browser, live_server, login, graded_queue, make_user, screenshot_dir
):
    from django.contrib.auth import get_user_model

    from annotation.models import CriterionAdjudication, QueueItem
    from annotation.services.claims import queue_next
    from annotation.services.labelling import label_submit

    make_user("adj", "adjudicator", password=PASSWORD)
    users = {u.username: u for u in get_user_model().objects.all()}
    claim = queue_next(queue=graded_queue, annotator=users["alice"])
    assert claim is not None and queue_next(queue=graded_queue, annotator=users["bob"]) is not None
    for who, faith, tone in (("alice", "5", "kind"), ("bob", "2", "kind")):
        label_submit(
            queue=graded_queue,
            item_id=claim.item.pk,
            annotator=users[who],
            verdict="correct",
            rationale=f"{who} read the passage",
            values={"faithfulness": faith, "tone": tone},
        )
    for width in (800, 1280):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        login(page, "adj", PASSWORD)
        page.goto(f"{live_server.url}/queues/{graded_queue.pk}/adjudicate/")
        page.wait_for_selector(FORM)
        page.screenshot(path=str(screenshot_dir / f"queue-criteria-adjudicate-{width}.png"), full_page=True)
        if width == 800:
            context.close()
            continue
        assert "alice: 5 · bob: 2" in page.inner_text("fieldset[data-criterion=faithfulness]")
        # Only the disputed criterion has a control; the agreed tone has none.
        assert page.locator("input[name='values.tone']").count() == 0
        page.keyboard.press("c")
        page.keyboard.press("3")
        page.keyboard.press("r")
        page.keyboard.type("partly supported")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        context.close()
    assert list(CriterionAdjudication.objects.values_list("name", "value", "reason")) == [
        ("faithfulness", "3", "partly supported")
    ]
    assert QueueItem.objects.get(pk=claim.item.pk).status == "adjudicated"
