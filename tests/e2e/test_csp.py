"""In Chromium, under the real Content-Security-Policy: every page each demo role reaches loads with nothing
blocked and no script error, and the htmx and keyboard parts still work."""

import re
from collections import defaultdict
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import HumanLabel

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROLES = ["expert", "annotator", "adjudicator", "engineer"]
# Pages that must be among those crawled (their templates are the ones with charts, bars and scripts).
REACHES = {
    "expert": [
        "/corpus/",
        "/tagging/stdlib-support/",
        "/tagging/stdlib-support/q/q-0001/",
        "/tagging/stdlib-support/stats/",
        "/tagging/stdlib-support/traffic/",
    ],
    "annotator": ["/queues/"],
    "adjudicator": ["/queues/new/", "/audits/"],
    "engineer": ["/runs/demo-rag-v2/", "/series/", "/datasets/stdlib-support/history/", "/judges/"],
}
PER_SHAPE = 2  # pages per URL shape (a run page, a question page…): the shape is what the templates decide
WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture
def demo(db):
    """The demo, whose calibrated span judge gives the judge version and calibration run pages content."""
    call_command("seed_demo", verbosity=0, stdout=__import__("io").StringIO())


class Watched:
    """A signed-in page that records CSP violations (events and console reports) and script errors."""

    def __init__(self, context, base_url):
        self.page = context.new_page()
        self.base = base_url
        self.console: list[str] = []
        self.errors: list[str] = []
        self.page.add_init_script(WATCH)
        self.page.on("console", lambda m: "Content Security Policy" in m.text and self.console.append(m.text))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def problems(self) -> list[str]:
        events = self.page.evaluate("window.__csp || []")
        found = events + self.console + self.errors
        self.console.clear()
        self.errors.clear()
        return found

    def open(self, path: str):
        response = self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return response


def shape(path: str) -> str:
    return re.sub(r"[^/]*\d[^/]*", "*", path)


def crawl(watched: Watched) -> dict[str, list[str]]:
    """Follow the in-app links from home (not admin, API, static or logout), PER_SHAPE pages a shape."""
    seen, per_shape, frontier, problems = set(), defaultdict(int), ["/"], {}
    while frontier:
        path = frontier.pop(0)
        if path in seen or per_shape[shape(path)] >= PER_SHAPE:
            continue
        seen.add(path)
        per_shape[shape(path)] += 1
        response = watched.open(path)
        assert response.status in (200, 403), f"{path} answered {response.status}"
        found = watched.problems()
        if found:
            problems[path] = found
        hrefs = watched.page.eval_on_selector_all("a[href^='/']", "els => els.map(e => e.getAttribute('href'))")
        for href in hrefs:
            link = urlsplit(href).path
            if not link.startswith(("/static/", "/admin/", "/api/", "/logout")) and link not in seen:
                frontier.append(link)
    return {"pages": sorted(seen), "problems": problems}


def test_the_violation_watch_sees_what_the_policy_blocks(live_server, browser, login, demo):
    context = browser.new_context()
    watched = Watched(context, live_server.url)
    login(watched.page, "engineer", "demo-engineer")
    watched.open("/runs/")
    watched.page.evaluate("""() => {
        const s = document.createElement("script"); s.textContent = "window.ran = true"; document.body.append(s);
        document.body.setAttribute("style", "color: red");
    }""")
    watched.page.wait_for_timeout(300)
    found = watched.problems()
    assert watched.page.evaluate("window.ran === undefined")
    assert any(p.startswith("script-src-elem blocked inline") for p in found), found
    assert any(p.startswith("style-src-attr blocked inline") for p in found), found
    context.close()


@pytest.mark.parametrize("role", ROLES)
def test_every_page_a_role_reaches_loads_with_nothing_blocked(live_server, browser, login, demo, role):
    context = browser.new_context()
    watched = Watched(context, live_server.url)
    login(watched.page, role, f"demo-{role}")
    assert watched.problems() == []

    result = crawl(watched)

    assert result["problems"] == {}
    assert set(REACHES[role]) <= set(result["pages"]), sorted(result["pages"])
    if role == "engineer":
        assert {p.split("/")[2] for p in result["pages"] if p.startswith("/judges/") and p.count("/") == 4} == {
            "versions",
            "runs",
        }, result["pages"]
    context.close()


def test_the_interactive_parts_work_under_the_policy(live_server, browser, login, demo):
    context = browser.new_context()
    watched = Watched(context, live_server.url)
    page = watched.page

    # Corpus search as you type (htmx), matches marked.
    login(page, "engineer", "demo-engineer")
    watched.open("/corpus/")
    page.fill("input[name=q]", "json")
    expect(page.locator("#hits li.card").first).to_be_visible()
    expect(page.locator("#hits mark").first).to_be_visible()

    # A comparison: the intervals chart, then a regression opened in place (htmx click once).
    watched.open("/compare/?a=demo-rag-v1&b=demo-rag-v2")
    expect(page.locator("[data-testid=interval-chart]")).to_be_visible()
    first = page.locator(".regressions details").first
    first.locator("summary").click()
    expect(first.locator(".detail")).not_to_contain_text("loading…")

    # The series chart draws its legend swatches and points.
    watched.open("/series/?dataset=stdlib-support")
    expect(page.locator("[data-testid=series-chart] circle").first).to_be_visible()
    assert page.locator(".legend svg.swatch rect").count() >= 1
    assert watched.problems() == []

    # Tagging: searching by keyboard opens a chunk; a question page opened with a query searches at once.
    expert = Watched(browser.new_context(), live_server.url)
    login(expert.page, "expert", "demo-expert")
    expert.open("/tagging/stdlib-support/")
    expert.open(expert.page.locator("#queue tbody tr a").first.get_attribute("href"))
    expert.page.fill("#search", "json")
    expect(expert.page.locator("#hit-list li.hit").first).to_be_visible()
    expert.page.locator("#search").press("Escape")
    expert.page.keyboard.press("j")
    expert.page.keyboard.press("Enter")
    expect(expert.page.locator("#chunk-text mark").first).to_be_visible()
    assert expert.problems() == []

    # Labelling: keyboard 1 then Enter submits through htmx and the next item arrives in place.
    annotator = Watched(browser.new_context(), live_server.url)
    login(annotator.page, "annotator", "demo-annotator")
    annotator.open("/queues/")
    annotator.page.locator("a.button:has-text('Label')").first.click()
    annotator.page.wait_for_load_state("networkidle")
    form = annotator.page.locator("form[data-keyboard-form]")
    first_item = form.get_attribute("data-item")
    labels = HumanLabel.objects.count()
    annotator.page.keyboard.press("1")
    annotator.page.keyboard.press("Enter")
    expect(form).not_to_have_attribute("data-item", first_item)
    assert HumanLabel.objects.count() == labels + 1
    assert annotator.problems() == []
    context.close()


def test_the_admin_loads_with_nothing_blocked(live_server, browser, make_user):
    root = make_user("root", "engineer")
    root.is_staff = root.is_superuser = True
    root.save()
    watched = Watched(browser.new_context(), live_server.url)
    watched.open("/admin/login/")
    watched.page.fill("#id_username", "root")
    watched.page.fill("#id_password", "pw-" + "x" * 8)
    with watched.page.expect_navigation():
        watched.page.click("input[type=submit]")
    assert watched.page.url == live_server.url + "/admin/"
    pages = {}
    for path in (
        "/admin/",
        "/admin/auth/user/",
        f"/admin/auth/user/{root.pk}/change/",
        "/admin/auth/group/add/",
        "/admin/annotation/",
        "/admin/calibration/",
        "/admin/axes/accessattempt/",
    ):
        assert watched.open(path).status == 200, path
        pages[path] = watched.problems()
    assert pages == {path: [] for path in pages}
