"""The tagging list a page at a time in a real browser: 100 questions a page, `next` and `previous` links
that keep the filters, and the keyboard flow (j/k move, Enter opens) on every page; screenshots at 1280 and
800 px wide."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.services.datasets import questions_import
from annotation.services.users import user_upsert

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-e2e-tagging-pages"


@pytest.fixture
def grown(tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = []
    for k in range(230):
        record = {"qid": f"q-{k:05d}", "question": f"How long does plan {k} take to renew?", "stratum": "policy"}
        if k % 3 == 0:
            record.update(gold_doc_id="kb", gold_chunk_id="kb#0000", gold_text="thirty days", labelled_by="eve")
        rows.append(json.dumps(record) + "\n")
    path.write_text("".join(rows), encoding="utf-8")
    questions_import(path=path, dataset_name="grown")
    user_upsert(username="eve", roles=["expert"], password=PASSWORD)


def test_the_list_pages_by_links_and_keeps_the_keyboard_flow(grown, page, login, live_server, screenshot_dir):
    page.set_viewport_size({"width": 1280, "height": 900})
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/grown/")
    rows = page.locator("#queue tbody tr")
    expect(rows).to_have_count(100)
    expect(rows.first).to_have_attribute("data-qid", "q-00000")
    expect(page.locator("#previous-page")).to_have_count(0)
    page.screenshot(path=str(screenshot_dir / "tagging-list-paged-1280.png"), full_page=True)

    page.locator("#next-page").click()
    page.wait_for_url(re.compile(r"/tagging/grown/\?after=q-00099$"))
    expect(rows.first).to_have_attribute("data-qid", "q-00100")
    # The keyboard on the second page: j selects its first question, j the next, Enter opens it.
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/tagging/grown/q/q-00101/$"))
    page.go_back()

    page.locator("#next-page").click()
    expect(rows).to_have_count(30)
    expect(page.locator("#next-page")).to_have_count(0)
    page.locator("#previous-page").click()
    page.wait_for_url(re.compile(r"/tagging/grown/\?before=q-00200$"))
    expect(rows.first).to_have_attribute("data-qid", "q-00100")
    page.locator("#first-page").click()
    expect(rows.first).to_have_attribute("data-qid", "q-00000")

    # A filter is kept by the links: the untagged questions, 153 of them, pages of 100.
    page.select_option("select[name=status]", "untagged")
    page.locator("form.filters button[type=submit]").click()
    expect(page.locator("form.filters .muted")).to_contain_text("153 shown")
    page.locator("#next-page").click()
    page.wait_for_url(re.compile(r"/tagging/grown/\?status=untagged&after=q-00149$"))
    expect(rows).to_have_count(53)
    expect(rows.first).to_have_attribute("data-qid", "q-00151")
    expect(page.locator("#tagged-count")).to_have_text("77")

    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(screenshot_dir / "tagging-list-paged-800.png"), full_page=True)
