"""Gold tagging in a real browser: keyboard-only tagging, narrowing, not answerable, publish and export;
a save through a failed request lands exactly once; a conflict is shown, never silently overwritten.
(Past 400 lines: one browser session set up once for the whole expert's day, which each test walks.)"""

import datetime
import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Dataset, DatasetVersion, EditAudit, WorkingExample
from annotation.services.corpus import corpus_import
from annotation.services.datasets import questions_import
from annotation.services.users import user_upsert
from annotation.services.working import working_edit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-e2e-tagging"
TRIAL = "Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert."
CORPUS = [
    {
        "doc_id": "kb:PRICE",
        "title": "Legacy plans",
        "source": "confluence",
        "text": f"Plans sold before 2024 are legacy plans; trials ran fourteen days.\n\n{TRIAL}\n\nLegacy Team plans bill monthly.",
    },
    {
        "doc_id": "kb:SEC",
        "title": "Security",
        "source": "wiki",
        "text": "Passwords rotate every ninety days.\n\nSingle sign-on is available on Enterprise plans.",
    },
]
QUESTIONS = [
    {
        "qid": "q-1",
        "question": "is sso available",
        "stratum": "policy",
        "gold_doc_id": "kb:SEC",
        "gold_chunk_id": "kb:SEC#0001",
        "gold_text": "Single sign-on is available on Enterprise plans.",
        "labelled_by": "ann",
    },
    {
        "qid": "q-2",
        "question": "how often do passwords rotate",
        "stratum": "policy",
        "asked_by": "support",
        "source": "conversation_log:2026-05-12",
    },
    {"qid": "q-4", "question": "how long is the legacy enterprise trial", "stratum": "policy", "asked_by": "sales"},
    {"qid": "q-5", "question": "what is the refund policy on mars", "stratum": "policy", "asked_by": "support"},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def seeded(tmp_path):
    corpus_import(path=write(tmp_path / "corpus.jsonl", CORPUS))
    questions_import(path=write(tmp_path / "questions.jsonl", QUESTIONS), dataset_name="support")
    for name, roles in (("eve", ["expert"]), ("ola", ["expert"]), ("ann", ["annotator"])):
        user_upsert(username=name, roles=roles, password=PASSWORD)
    return Dataset.objects.get(name="support")


def saved(page):
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^(Saved|All changes saved)"))


def select_hit(page, query, chunk_id):
    """Once the results for `query` are in, leave the search box and press j until chunk_id is selected."""
    expect(page.locator("#hit-list")).to_have_attribute("data-q", query)
    page.keyboard.press("Escape")  # j and k type into the search box; Escape hands them to the results
    page.keyboard.press("k")
    for _ in range(10):
        if page.locator("#hit-list li.hit.selected").get_attribute("data-chunk-id") == chunk_id:
            return
        page.keyboard.press("j")
    pytest.fail(f"{chunk_id} is not among the results")


def select_text_in_chunk(page, text):
    """Select `text` inside the open chunk, as a mouse drag would."""
    page.evaluate(
        """(needle) => {
        const root = document.getElementById('chunk-text');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const at = node.textContent.indexOf(needle);
            if (at >= 0) {
                const range = document.createRange();
                range.setStart(node, at); range.setEnd(node, at + needle.length);
                const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
                return;
            }
        }
        throw new Error('text not in one node of the chunk: ' + needle);
    }""",
        text,
    )


def test_expert_tags_by_keyboard_narrows_marks_not_answerable_publishes_and_exports(
    seeded, page, login, live_server, screenshot_dir
):
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/?status=untagged")
    expect(page.locator("#queue tbody tr")).to_have_count(3)
    page.screenshot(path=str(screenshot_dir / "tagging-queue.png"), full_page=True)
    # The queue: j selects the first untagged question, Enter opens it.
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/tagging/support/q/q-2/\?status=untagged$"))
    expect(page.locator("#question-text")).to_have_text("how often do passwords rotate")
    expect(page.locator("#asked-by")).to_have_text("support")

    # q-2: keyboard only. / search, j/k, Enter opens, t tags, e expected, g grading, s saves, n next.
    page.keyboard.press("/")
    expect(page.locator("#search")).to_be_focused()
    page.keyboard.type("days")
    select_hit(page, "days", "kb:SEC#0000")
    expect(page.locator("#hit-list li.hit.selected mark").first).to_have_text(re.compile("days", re.I))
    page.keyboard.press("Enter")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0000")
    page.keyboard.press("t")
    expect(page.locator("#gold_text")).to_have_value("Passwords rotate every ninety days.")
    page.keyboard.press("e")
    page.keyboard.type("every 90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("g")
    expect(page.locator("#grading")).to_be_focused()
    page.keyboard.type("extraction")
    page.keyboard.press("Escape")
    expect(page.locator("#grading")).to_have_value("extraction")
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.keyboard.press("s")
    saved(page)
    page.keyboard.press("n")
    page.wait_for_url(re.compile(r"/tagging/support/q/q-4/\?status=untagged$"))

    # q-4: open the passage, narrow gold_text to the words that answer, tag, one more passage with +.
    page.keyboard.press("/")
    page.keyboard.type("enterprise")
    select_hit(page, "enterprise", "kb:PRICE#0001")
    expect(page.locator("#hit-list li.hit[data-doc-id='kb:SEC']")).to_have_count(1)
    page.keyboard.press("d")  # only the selected result's document
    expect(page.locator("#filter-doc")).to_have_value("kb:PRICE")
    expect(page.locator("#hit-list li.hit[data-doc-id='kb:SEC']")).to_have_count(0)
    expect(page.locator("#hit-list li.hit")).to_have_count(1)
    page.keyboard.press("Enter")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:PRICE#0001")
    expect(page.locator("#chunk .neighbour")).to_have_count(2)
    select_text_in_chunk(page, "thirty (30) days from activation")
    page.keyboard.press("t")
    expect(page.locator("#gold_text")).to_have_value("thirty (30) days from activation")
    page.keyboard.press("]")  # the next chunk of the document, for context; added as a second passage
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:PRICE#0002")
    page.keyboard.press("+")
    expect(page.locator("#passages li")).to_have_count(2)
    page.keyboard.press("e")
    page.keyboard.type("30 days")
    page.keyboard.press("Escape")
    page.keyboard.press("[")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:PRICE#0001")
    saved(page)
    page.screenshot(path=str(screenshot_dir / "tagging-page.png"), full_page=True)
    page.keyboard.press("n")
    page.wait_for_url(re.compile(r"/tagging/support/q/q-5/\?status=untagged$"))

    # q-5: not answerable from the corpus.
    page.keyboard.press("x")
    expect(page.locator("#no-answer")).to_be_checked()
    expect(page.locator("#stratum")).to_have_value("no_answer")
    page.keyboard.press("n")  # the last question of the queue: back to the queue
    page.wait_for_url(re.compile(r"/tagging/support/\?status=untagged$"))
    expect(page.locator("#queue tbody tr")).to_have_count(1)  # "No question matches"

    # Publish: the diff first, then confirm.
    page.goto(f"{live_server.url}/tagging/support/publish/")
    expect(page.locator("#diff-summary")).to_contain_text("0 added · 0 removed · 3 modified")
    expect(page.locator("#diff-modified tbody tr[data-qid='q-5']").first).to_be_visible()
    page.fill("#note", "first gold")
    page.locator("#confirm-publish").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/tagging/support/")
    expect(page.locator(".messages")).to_contain_text("Published support v2")

    latest = DatasetVersion.objects.filter(dataset__name="support").order_by("-number").first()
    assert (latest.number, latest.source, latest.modified, latest.unchanged, latest.note) == (
        2,
        "publish",
        3,
        1,
        "first gold",
    )
    out = io.StringIO()
    call_command("export_questions", "--dataset", "support", stdout=out)
    exported = {r["qid"]: r for r in map(json.loads, out.getvalue().splitlines())}
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert exported["q-1"] == QUESTIONS[0]
    assert exported["q-2"] == {
        **QUESTIONS[1],
        "gold_doc_id": "kb:SEC",
        "gold_chunk_id": "kb:SEC#0000",
        "gold_text": "Passwords rotate every ninety days.",
        "expected": "every 90 days",
        "grading": "extraction",
        "labelled_by": "eve",
        "labelled_at": today,
    }
    assert exported["q-4"] == {
        **QUESTIONS[2],
        "gold_doc_id": "kb:PRICE",
        "gold_chunk_id": "kb:PRICE#0001",
        "gold_text": "thirty (30) days from activation",
        "gold_extra_chunk_ids": ["kb:PRICE#0002"],
        "expected": "30 days",
        "labelled_by": "eve",
        "labelled_at": today,
    }
    assert exported["q-5"] == {
        **QUESTIONS[3],
        "stratum": "no_answer",
        "gold_doc_id": None,
        "gold_chunk_id": None,
        "gold_text": None,
        "labelled_by": "eve",
        "labelled_at": today,
    }
    eve = get_user_model().objects.get(username="eve")
    assert set(EditAudit.objects.filter(user=eve).values_list("qid", flat=True)) == {"q-2", "q-4", "q-5"}
    assert all(s >= 0 for s in EditAudit.objects.values_list("active_seconds", flat=True))


@pytest.mark.parametrize("failure", ["response_lost", "request_lost"])
def test_a_save_through_a_failed_request_is_retried_and_lands_once(seeded, page, login, live_server, failure):
    login(page, "eve", PASSWORD)
    bodies = []

    def flaky(route):
        request = route.request
        if request.method != "PATCH":
            route.continue_()
            return
        bodies.append(request.post_data_json)
        if len(bodies) == 1:
            if failure == "response_lost":
                route.fetch()  # the server writes it; the answer never reaches the page
            route.abort("failed")
            return
        route.continue_()

    page.route("**/api/datasets/support/working/q-2/", flaky)
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Saved \(revision 1\)"), timeout=15000)
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]  # the same client_key, base revision and changes on the retry
    assert bodies[0]["base_revision"] == 0 and bodies[0]["changes"]["expected"] == "90 days"
    audits = EditAudit.objects.filter(dataset__name="support", qid="q-2")
    assert sorted(set(audits.values_list("revision", flat=True))) == [1]
    assert sorted(audits.values_list("field", flat=True)) == ["expected", "labelled_at", "labelled_by"]
    row = WorkingExample.objects.get(dataset__name="support", qid="q-2")
    assert (row.revision, row.record["expected"]) == (1, "90 days")


def test_two_experts_on_one_question_see_a_conflict_not_an_overwrite(seeded, page, login, live_server):
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    ola = get_user_model().objects.get(username="ola")
    working_edit(dataset_name="support", qid="q-2", changes={"expected": "ninety days"}, base_revision=0, user=ola)
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    conflict = page.locator("#conflict")
    expect(conflict).to_be_visible()
    expect(conflict).to_contain_text("ola")
    expect(conflict.locator("tr[data-field='expected']")).to_contain_text('"ninety days"')
    expect(conflict.locator("tr[data-field='expected']")).to_contain_text('"90 days"')
    row = WorkingExample.objects.get(dataset__name="support", qid="q-2")
    assert (row.revision, row.record["expected"], row.updated_by.username) == (1, "ninety days", "ola")
    # The expert decides: keep theirs (nothing written) ... or save theirs over, explicitly.
    page.locator("#conflict-mine").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Saved \(revision 2\)"))
    row.refresh_from_db()
    assert (row.revision, row.record["expected"], row.updated_by.username) == (2, "90 days", "eve")


def test_an_annotator_is_refused_pages_and_api(seeded, page, login, live_server):
    login(page, "ann", PASSWORD)
    for url in (
        "/tagging/",
        "/tagging/support/",
        "/tagging/support/q/q-2/",
        "/tagging/support/publish/",
        "/tagging/support/stats/",
        "/api/datasets/support/working/q-2/",
        "/api/chunks/?q=legacy",
    ):
        assert page.goto(f"{live_server.url}{url}").status == 403, url
    assert "Gold tagging" not in page.goto(f"{live_server.url}/").text()
    assert WorkingExample.objects.count() == 0


def test_stale_gold_is_flagged_and_retagged_in_one_go(seeded, page, login, live_server, tmp_path):
    # The security page gains a paragraph: q-1's gold text moves from kb:SEC#0001 to kb:SEC#0002.
    corpus_import(
        path=write(tmp_path / "corpus2.jsonl", [dict(CORPUS[1], text="Security overview.\n\n" + CORPUS[1]["text"])])
    )
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/support/?status=flagged")
    expect(page.locator("#queue tbody tr.stale-row")).to_have_count(1)
    expect(page.locator("#queue tbody tr[data-qid='q-1']")).to_contain_text("stale: gold_text no longer in the chunk")
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # the row's one-click path: Re-tag
    page.wait_for_url(re.compile(r"/tagging/support/q/q-1/\?retag=1&status=flagged$"))
    expect(page.locator("#stale-note")).to_contain_text("kb:SEC#0002")
    expect(page.locator("#chunk .chunk-view")).to_have_attribute("data-chunk-id", "kb:SEC#0002")  # opened for you
    expect(page.locator("#hit-list li.hit").first).to_be_visible()  # and searched for its text at once
    page.keyboard.press("t")
    page.keyboard.press("n")
    page.wait_for_url(re.compile(r"/tagging/support/\?status=flagged$"))
    expect(page.locator("#queue tbody tr.stale-row")).to_have_count(0)
    record = WorkingExample.objects.get(dataset__name="support", qid="q-1").record
    assert (record["gold_chunk_id"], record["gold_doc_id"], record["gold_text"], record["labelled_by"]) == (
        "kb:SEC#0002",
        "kb:SEC",
        "Single sign-on is available on Enterprise plans.",
        "eve",
    )


def test_active_time_counts_input_while_visible_not_idle_or_hidden(seeded, page, login, live_server):
    login(page, "eve", PASSWORD)
    page.clock.install()
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    page.clock.pause_at(datetime.datetime(2030, 1, 1, 12, 0, 0))
    page.keyboard.press("e")  # input: the clock runs ...
    page.clock.run_for(10_000)  # ... 10 s of work
    page.keyboard.press("Escape")
    page.clock.run_for(600_000)  # 10 min away: counted only until 30 s after the last input
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'hidden'});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    page.keyboard.press("k")  # input while the tab is hidden does not count
    page.clock.run_for(20_000)
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'visible'});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Saved \(revision 1\)"))
    seconds = WorkingExample.objects.get(dataset__name="support", qid="q-2").active_seconds
    # One-second ticks from the first key to 30 s after the last one before leaving (Escape at +10 s):
    # 40, or 39 when a tick falls exactly on the 30th second; nothing of the idle minutes, nothing hidden.
    assert seconds in (39.0, 40.0)
    assert set(EditAudit.objects.filter(qid="q-2").values_list("active_seconds", flat=True)) == {seconds}


def test_unsaved_work_survives_a_crashed_tab(seeded, page, login, live_server):
    login(page, "eve", PASSWORD)
    page.route(
        "**/api/datasets/support/working/q-2/",
        lambda route: route.abort("failed") if route.request.method == "PATCH" else route.continue_(),
    )
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(page.locator("#save-status")).to_contain_text("Not saved yet (network error)")
    context = page.context
    page.close(run_before_unload=False)  # the tab dies with the save still retrying
    assert not WorkingExample.objects.filter(qid="q-2").exists()
    again = context.new_page()
    again.goto(f"{live_server.url}/tagging/support/q/q-2/")
    expect(again.locator("#save-status")).to_have_text(re.compile(r"^Saved \(revision 1\)"))
    expect(again.locator("#expected")).to_have_value("90 days")
    row = WorkingExample.objects.get(dataset__name="support", qid="q-2")
    assert (row.revision, row.record["expected"], row.updated_by.username) == (1, "90 days", "eve")


def test_a_retried_save_that_another_expert_overtook_shows_a_conflict(seeded, page, login, live_server):
    login(page, "eve", PASSWORD)
    ola = get_user_model().objects.get(username="ola")
    patches = []

    def overtaken(route):
        if route.request.method != "PATCH":
            route.continue_()
            return
        patches.append(route.request.post_data_json)
        if len(patches) == 1:
            route.fetch()  # eve's save lands as revision 1; the reply is lost ...
            working_edit(
                dataset_name="support", qid="q-2", changes={"expected": "ninety days"}, base_revision=1, user=ola
            )
            route.abort("failed")  # ... and ola saves revision 2 before eve's retry
            return
        route.continue_()

    page.route("**/api/datasets/support/working/q-2/", overtaken)
    page.goto(f"{live_server.url}/tagging/support/q/q-2/")
    page.keyboard.press("e")
    page.keyboard.type("90 days")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(page.locator("#conflict")).to_be_visible(timeout=15000)
    expect(page.locator("#conflict tr[data-field='expected']")).to_contain_text('"ninety days"')
    assert len(patches) == 2 and patches[0] == patches[1]
    row = WorkingExample.objects.get(dataset__name="support", qid="q-2")
    assert (row.revision, row.record["expected"], row.updated_by.username) == (2, "ninety days", "ola")
    assert sorted(set(EditAudit.objects.filter(qid="q-2").values_list("revision", "user__username"))) == [
        (1, "eve"),
        (2, "ola"),
    ]
