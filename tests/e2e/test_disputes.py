"""Browser: the adjudication list reaches imported disputes a queue could never settle, an adjudicator
settles one with the keyboard; a rework item shows the auditor's label only after the relabel."""

import pytest

from annotation.models import Adjudication, Queue
from tests.annotation.conftest import import_disputed_run, make_run, pool  # noqa: F401  (fixtures)
from tests.annotation.services.test_audits import audit_labels
from tests.e2e.shots import SCREENSHOTS

PASSWORD = "pw-" + "x" * 8
SHOTS = SCREENSHOTS / "disputes"


def _shoot(page, name: str):
    """Screenshots at 1280 and 800 px wide; at 800 px nothing scrolls sideways."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), width
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_adjudication_list_settles_an_imported_dispute_keyboard_only(
    browser, live_server, login, make_user, tmp_path
):
    from annotation.services.queues import queue_create

    for name in ("ann1", "ann2", "ann3", "ann4"):
        make_user(name, "annotator", password=PASSWORD)
    make_user("judith", "adjudicator", password=PASSWORD)
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    queue_create(name="second look", annotators=["ann3", "ann4"], run_id=run_id, seed=3)
    page = browser.new_context().new_page()
    login(page, "judith", PASSWORD)
    page.goto(f"{live_server.url}/adjudication/")
    assert page.inner_text("#dispute-count").startswith("2 disputed answers for you to settle.")
    assert page.locator("table.disputes tbody tr").count() == 2
    assert "labelling queue second look: open" in page.inner_text("table.disputes")
    assert run_id not in page.content() and "rag-secret" not in page.content()
    _shoot(page, "adjudication-list")
    page.select_option("#f-source", "queue")
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    assert page.locator("table.disputes").count() == 0
    assert "No disputed answers left for you to settle with these filters." in page.inner_text("main")
    page.goto(f"{live_server.url}/adjudication/?source=import")
    with page.expect_navigation():
        page.click("table.disputes tbody tr:first-child a.button")
    page.wait_for_selector("form[data-keyboard-form]")
    assert "How long does plan 1 last?" in page.inner_text(".question")
    _shoot(page, "adjudication-settle")
    page.keyboard.press("2")
    page.keyboard.press("r")
    page.keyboard.type("the plan lasts 1 day; the answer says otherwise")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Settled as incorrect." in page.inner_text(".messages")
    assert page.locator("table.disputes tbody tr").count() == 1
    assert list(Adjudication.objects.values_list("answer__qid", "adjudicator__username", "verdict")) == [
        ("q-0001", "judith", "incorrect")
    ]


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_rework_item_shows_the_auditor_label_only_after_the_relabel(browser, live_server, login, make_run, pool):
    from annotation.models import Answer
    from annotation.services.audits import audit_create
    from annotation.services.labels import label_write

    run_id = make_run(6)
    for answer in Answer.objects.filter(run__run_id=run_id):
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect", source="app")
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct", source="app")
    audit = audit_create(
        name="ann1 week", auditors=["ann2"], run_id=run_id, changed_by="ann1", rubric="Name the term.", seed=0
    )
    audit_labels(audit.pk, pool["ann2"], lambda a: "incorrect")
    queue = Queue.objects.get(kind=Queue.KIND_REWORK)
    page = browser.new_context().new_page()
    login(page, "ann1", PASSWORD)
    page.goto(f"{live_server.url}/queues/{queue.pk}/label/")
    page.wait_for_selector("form[data-keyboard-form]")
    assert page.is_visible("details[open] .rubric") and "Name the term." in page.inner_text(".rubric")
    assert page.locator("[data-testid=rework-feedback]").count() == 0 and "ann2" not in page.inner_text("main")
    page.keyboard.press("2")
    page.keyboard.press("r")
    page.keyboard.type("no term named")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=rework-feedback]")
    feedback = page.inner_text("[data-testid=rework-feedback]")
    assert "You said incorrect; the batch held correct." in feedback
    assert "Auditor ann2 (blind): incorrect" in feedback
    _shoot(page, "rework-item")
