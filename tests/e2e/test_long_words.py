"""Long unbroken words (URLs, hashes, stack traces) wrap: the labelling and tagging pages never scroll
sideways, at 1280 px or 800 px, whatever the question, answer, expected answer or gold passage hold."""

import json

import pytest

from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import
from annotation.services.queues import queue_create
from annotation.services.runs import run_import
from annotation.services.users import user_upsert

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-" + "x" * 8
# The elements whose right edge passes the window, deepest first: what to fix when the test fails.
TOO_WIDE = """[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
  .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 1))
  .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`)"""
WORD = "x" * 3000
URL = "https://example.com/" + "a/" * 600


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def long_item(tmp_path):
    user_upsert(username="ann", roles=["annotator"], password=PASSWORD)
    user_upsert(username="ann2", roles=["annotator"], password=PASSWORD)
    user_upsert(username="exp", roles=["expert"], password=PASSWORD)
    corpus_import(path=write(tmp_path / "c.jsonl", [{"doc_id": "kb:LONG", "title": "T" + WORD[:900], "text": f"See {URL} and {WORD}."}]))
    questions_import(path=write(tmp_path / "q.jsonl", [{
        "qid": "q-long", "question": f"what does {URL} say", "stratum": "s", "expected": WORD,
        "gold_doc_id": "kb:LONG", "gold_chunk_id": "kb:LONG#0000", "gold_text": WORD}]), dataset_name="long")
    run_import(path=write(tmp_path / "r.jsonl", [{"run_id": "r-long", "system": "s", "dataset": "long"},
                                                 {"qid": "q-long", "answer": f"Traceback {WORD} {URL}"}]))
    return queue_create(name="long", annotators=["ann", "ann2"], overlap=2, run_id="r-long", rubric="R " + WORD)


@pytest.mark.parametrize("width", [1280, 800])
def test_no_page_scrolls_sideways_on_long_words(browser, live_server, login, long_item, width, screenshot_dir):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    login(page, "ann", PASSWORD)
    page.goto(f"{live_server.url}/queues/{long_item.pk}/label/")
    page.wait_for_selector("form[data-keyboard-form]")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    page.screenshot(path=str(screenshot_dir / f"long_words_label_{width}.png"))
    assert overflow <= 0, f"the labelling page is {overflow} px wider than {width} px: {page.evaluate(TOO_WIDE)}"

    expert = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    login(expert, "exp", PASSWORD)
    expert.goto(f"{live_server.url}/tagging/long/q/q-long/")
    expert.wait_for_selector("#gold-text, textarea, form")
    overflow = expert.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    expert.screenshot(path=str(screenshot_dir / f"long_words_tag_{width}.png"))
    assert overflow <= 0, f"the tagging page is {overflow} px wider than {width} px: {expert.evaluate(TOO_WIDE)}"
