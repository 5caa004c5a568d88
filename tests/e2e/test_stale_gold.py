"""The stale-gold chart of the dataset page and its re-tagging queue in a real browser: open the stale
list from the chart, re-tag one, the next step goes to the other stale one, the re-tagged one is gone."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import WorkingExample
from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import
from annotation.services.users import user_upsert

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-e2e-stale-gold"
SEC = {
    "doc_id": "kb:SEC",
    "title": "Security",
    "source": "wiki",
    "text": "Passwords rotate every ninety days.\n\nSingle sign-on is available on Enterprise plans.",
}
QUESTIONS = [
    {
        "qid": "q-1",
        "question": "is sso available",
        "stratum": "policy",
        "gold_doc_id": "kb:SEC",
        "gold_chunk_id": "kb:SEC#0001",
        "gold_text": "Single sign-on is available on Enterprise plans.",
    },
    {"qid": "q-2", "question": "what is the refund policy", "stratum": "policy"},
    {
        "qid": "q-3",
        "question": "how often do passwords rotate",
        "stratum": "policy",
        "gold_doc_id": "kb:SEC",
        "gold_chunk_id": "kb:SEC#0000",
        "gold_text": "Passwords rotate every ninety days.",
    },
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def decayed(tmp_path):
    corpus_import(path=write(tmp_path / "c1.jsonl", [SEC]))
    questions_import(path=write(tmp_path / "q.jsonl", QUESTIONS), dataset_name="support")
    # Both passages are rewritten: neither gold text is anywhere in the live corpus now.
    changed = dict(SEC, text="Passwords rotate every thirty days.\n\nSingle sign-on is available on all plans.")
    corpus_import(path=write(tmp_path / "c2.jsonl", [changed]))
    user_upsert(username="eve", roles=["expert"], password=PASSWORD)


def test_chart_opens_the_stale_list_and_a_retagged_question_leaves_it(
    decayed, page, login, live_server, screenshot_dir
):
    login(page, "eve", PASSWORD)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/datasets/support/")
        expect(page.get_by_test_id("stale-chart")).to_be_visible()
        page.get_by_test_id("stale-chart").screenshot(path=str(screenshot_dir / f"stale-chart-{width}.png"))
        page.screenshot(path=str(screenshot_dir / f"dataset-stale-{width}.png"), full_page=True)
    expect(page.get_by_test_id("stale-now")).to_contain_text("Now 2 of 2 gold labels of v1 are stale (100.0 %)")
    page.get_by_test_id("retag-link").click()
    page.wait_for_url(re.compile(r"/tagging/support/\?stale=1$"))
    expect(page.locator("#queue tbody tr")).to_have_count(2)
    expect(page.locator("#stale-tab")).to_have_text("Stale gold (2)")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/tagging/support/q/q-1/\?retag=1&stale=1$"))
    # The chunk id now names the rewritten passage, opened for re-tagging: tag it, then next.
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0001")
    page.keyboard.press("t")
    expect(page.locator("#gold_text")).to_have_value("Single sign-on is available on all plans.")
    page.keyboard.press("n")
    # Next walks the stale ones only: q-3, not the untagged q-2.
    page.wait_for_url(re.compile(r"/tagging/support/q/q-3/\?stale=1$"))
    record = WorkingExample.objects.get(qid="q-1").record or {}
    assert record["gold_text"] == "Single sign-on is available on all plans."
    page.goto(f"{live_server.url}/tagging/support/?stale=1")
    expect(page.locator("#queue tbody tr")).to_have_count(1)
    expect(page.locator("#queue tbody tr[data-qid='q-3']")).to_be_visible()
    expect(page.locator("#stale-tab")).to_have_text("Stale gold (1)")
