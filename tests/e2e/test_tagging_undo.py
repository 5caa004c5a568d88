"""Gold tagging never loses an expert's work, in a real browser: "not answerable" toggled back brings the gold
back, a re-tag names the gold it replaced, u / Ctrl-Z / the undo link take edits back, every undo autosaves
(the working record the API serves matches the screen), and n in a conflict says why it stays."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import EditAudit, WorkingExample
from annotation.services.working import working_edit
from tests.e2e.test_tagging import PASSWORD, QUESTIONS, seeded  # noqa: F401  (seeded is a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GOLD = {k: QUESTIONS[0][k] for k in ("gold_doc_id", "gold_chunk_id", "gold_text")}
GOLDEN = "kb:SEC#0001 “Single sign-on is available on Enterprise plans.”"
REPLACED = f"replaced gold: {GOLDEN}"


def served(page, live_server, qid):
    """The working record and revision as GET /api/datasets/support/working/QID/ serves them."""
    resp = page.request.get(f"{live_server.url}/api/datasets/support/working/{qid}/")
    assert resp.status == 200, resp.text()
    data = resp.json()
    return data["record"], data["revision"]


def stored(qid):
    """The working row's revision, expected and who saved it last, as the database holds them."""
    row = WorkingExample.objects.get(dataset__name="support", qid=qid)
    assert row.record is not None and row.updated_by is not None
    return row.revision, row.record.get("expected"), row.updated_by.username


def gold_of(record):
    return {k: record.get(k) for k in ("gold_doc_id", "gold_chunk_id", "gold_text", "stratum")}


def saved_at(page, revision):
    expect(page.locator("#save-status")).to_have_text(
        re.compile(rf"^(Saved|All changes saved) \(revision {revision}\)")
    )


def settled(page):
    """The status says saved and nothing is pending: the server has what the screen shows."""
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^(Saved|All changes saved) \(revision"))
    page.wait_for_function("Object.keys(window.evalappTagging.changes()).length === 0")


def test_not_answerable_toggled_back_restores_the_gold_on_screen_and_on_the_server(seeded, page, login, live_server):
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/q/q-1/")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0001")
    page.keyboard.press("x")
    expect(page.locator("#no-answer")).to_be_checked()
    saved_at(page, 1)
    record, revision = served(page, live_server, "q-1")
    assert (revision, gold_of(record)) == (
        1,
        {"gold_doc_id": None, "gold_chunk_id": None, "gold_text": None, "stratum": "no_answer"},
    )

    page.keyboard.press("x")  # toggled back: the gold it cleared comes back, exactly
    expect(page.locator("#no-answer")).not_to_be_checked()
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    expect(page.locator("#passages li")).to_have_count(1)
    expect(page.locator("#passages li").first).to_have_attribute("data-chunk-id", "kb:SEC#0001")
    expect(page.locator("#stratum")).to_have_value("policy")
    saved_at(page, 2)
    record, revision = served(page, live_server, "q-1")
    assert (revision, gold_of(record)) == (2, {**GOLD, "stratum": "policy"})
    expect(page.locator("#undo-text")).to_have_text(
        "answerable again: gold kb:SEC#0001 “Single sign-on is available on Enterprise plans.” restored"
    )
    page.keyboard.press("u")  # undoing the toggle-back clears the gold again; undoing the first x restores it
    expect(page.locator("#no-answer")).to_be_checked()
    expect(page.locator("#undo-text")).to_have_text(
        "undone: answerable again: gold kb:SEC#0001 “Single sign-on is available on Enterprise plans.” restored"
    )
    page.keyboard.press("u")
    expect(page.locator("#undo-text")).to_have_text(f"undone: not answerable: cleared gold {GOLDEN}")
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    settled(page)
    assert gold_of(served(page, live_server, "q-1")[0]) == {**GOLD, "stratum": "policy"}


def test_a_retag_names_the_gold_it_replaced_and_undo_redo_restore_it_with_the_server_copy(
    seeded, page, login, live_server, screenshot_dir
):
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/q/q-1/")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0001")
    expect(page.locator("#undo-line")).to_be_hidden()
    page.keyboard.press("[")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0000")
    page.keyboard.press("t")
    expect(page.locator("#gold_text")).to_have_value("Passwords rotate every ninety days.")
    expect(page.locator("#undo-text")).to_have_text(REPLACED)
    expect(page.locator("#undo-btn")).to_be_visible()
    expect(page.locator("#undo-btn")).to_have_attribute("aria-label", f"undo: {REPLACED}")
    saved_at(page, 1)
    assert served(page, live_server, "q-1")[0]["gold_chunk_id"] == "kb:SEC#0000"
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(screenshot_dir / f"tagging-replaced-undo-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.keyboard.press("u")
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    expect(page.locator("#passages li").first).to_have_attribute("data-chunk-id", "kb:SEC#0001")
    expect(page.locator("#undo-text")).to_have_text(f"undone: {REPLACED}")
    expect(page.locator("#undo-btn")).to_be_hidden()  # nothing older to undo
    expect(page.locator("#redo-btn")).to_be_visible()
    saved_at(page, 2)
    record, revision = served(page, live_server, "q-1")
    assert (revision, gold_of(record)) == (2, {**GOLD, "stratum": "policy"})

    page.keyboard.press("Control+Shift+Z")  # redo: the re-tag again
    expect(page.locator("#gold_text")).to_have_value("Passwords rotate every ninety days.")
    saved_at(page, 3)
    page.keyboard.press("Control+z")
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    saved_at(page, 4)
    assert gold_of(served(page, live_server, "q-1")[0]) == {**GOLD, "stratum": "policy"}

    # In a text box Ctrl-Z is the browser's own undo of the typing: the gold is left alone.
    page.keyboard.press("e")
    page.keyboard.type("sso")
    page.keyboard.press("Control+z")
    expect(page.locator("#expected")).to_have_value("ss")  # the browser took back the last key typed
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    page.keyboard.press("Escape")

    # The undo link on the status line does what u does (kb:SEC#0000 is still the open chunk).
    page.keyboard.press("t")
    expect(page.locator("#undo-text")).to_have_text(REPLACED)
    settled(page)
    assert served(page, live_server, "q-1")[0]["gold_chunk_id"] == "kb:SEC#0000"
    page.locator("#undo-btn").click()
    expect(page.locator("#gold_text")).to_have_value(GOLD["gold_text"])
    settled(page)
    assert gold_of(served(page, live_server, "q-1")[0]) == {**GOLD, "stratum": "policy"}
    old_gold = list(
        EditAudit.objects.filter(qid="q-1", field="gold_chunk_id")
        .order_by("revision")
        .values_list("new_value", flat=True)
    )
    assert old_gold == ["kb:SEC#0000", "kb:SEC#0001", "kb:SEC#0000", "kb:SEC#0001", "kb:SEC#0000", "kb:SEC#0001"]


def test_next_in_a_conflict_says_why_it_stays_then_moves_on_after_the_choice(
    seeded, page, login, live_server, screenshot_dir
):
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    ola = get_user_model().objects.get(username="ola")
    working_edit(dataset_name="support", qid="q-2", changes={"expected": "ninety days"}, base_revision=0, user=ola)
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    stays = re.compile(r"^Not moving on: another expert saved this question since you opened it")

    page.keyboard.press("n")  # the save before moving on meets the conflict
    expect(page.locator("#conflict")).to_be_visible()
    expect(page.locator("#save-status")).to_have_text(stays)
    expect(page.locator("#conflict-theirs")).to_be_focused()
    page.keyboard.press("n")  # again, already in conflict: still says why, never "Saving before moving on…"
    expect(page.locator("#save-status")).to_have_text(stays)
    expect(page.locator("#save-status")).to_contain_text("then press n again")
    assert page.url == f"{live_server.url}/tagging/support/q/q-2/"
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(screenshot_dir / f"tagging-conflict-next-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert stored("q-2") == (1, "ninety days", "ola")

    page.keyboard.press("Enter")  # on "Take theirs": their version is shown, nothing is written
    expect(page.locator("#conflict")).to_be_hidden()
    expect(page.locator("#expected")).to_have_value("ninety days")
    expect(page.locator("#undo-text")).to_have_text("took their version (yours dropped)")
    page.keyboard.press("n")
    page.wait_for_url(re.compile(r"/tagging/support/q/q-4/$"))
    assert stored("q-2") == (1, "ninety days", "ola")
    assert page.evaluate("localStorage.getItem('evalapp:tagging:support:q-2')") is None
