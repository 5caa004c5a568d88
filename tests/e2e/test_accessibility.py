"""Every page holds up at 800 px and on a phone, and meets WCAG AA: axe-core's WCAG 2 A/AA rules
(contrast, labels on every control, names on buttons and links, landmarks), focus rings and selected
rows of at least 3:1 contrast, and no page that scrolls sideways.

One pass over the demo (seed_demo: every role's pages with real content), each page loaded once at
1280 px, then narrowed to 800 px and to a phone's 390 px."""

import io

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.core.management import call_command

from annotation.models import Example, Queue, Run
from annotation.services.demo import demo_password
from calibration.models import JudgeVersion

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
# The elements whose right edge passes the window, deepest first: what to fix when a page scrolls sideways.
TOO_WIDE = """() => [...document.querySelectorAll("body *")]
  .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
  .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 1))
  .filter((e) => !e.closest("[data-scroll-x]"))
  .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`)"""
# WCAG's contrast ratio of two CSS colours (rgb()/rgba() strings as getComputedStyle gives them).
CONTRAST_JS = """
function lum(c) {
  const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a, b) { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); }
function background(el) {
  for (let e = el.parentElement; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(c) && c !== "transparent") return c;
  }
  return "rgb(255, 255, 255)";
}
"""
# The focused element's outline and its contrast with what surrounds it (0 without a visible ring).
FOCUS_RING = (
    "() => {"
    + CONTRAST_JS
    + """
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const s = getComputedStyle(el);
  const width = parseFloat(s.outlineWidth) || 0;
  const ratio = s.outlineStyle === "none" || width < 2 ? 0 : contrast(s.outlineColor, background(el));
  return {el: `${el.tagName.toLowerCase()}#${el.id}.${el.className}`, ratio: Math.round(ratio * 100) / 100};
}"""
)
POSITIVE_TABINDEX = """() => [...document.querySelectorAll("[tabindex]")].filter((e) => e.tabIndex > 0)
  .map((e) => `${e.tagName.toLowerCase()}#${e.id}`)"""
SELECTED = (
    "() => {"
    + CONTRAST_JS
    + r"""
  return [...document.querySelectorAll(".selected, [aria-selected=true], [aria-current]")].map((el) => {
    // What marks it: an inset bar (box-shadow) or a border at least 2 px wide; else nothing but a tint.
    const s = getComputedStyle(el);
    const bar = s.boxShadow.includes("inset") && s.boxShadow.match(/rgba?\([^)]*\)/);
    const edge = bar ? bar[0] : parseFloat(s.borderLeftWidth) >= 2 ? s.borderLeftColor : s.backgroundColor;
    return {el: `${el.tagName.toLowerCase()}.${el.className}`, ratio: contrast(edge, background(el))};
  });
}"""
)


@pytest.fixture
def demo(live_server):
    call_command("seed_demo", stdout=io.StringIO())
    queue = Queue.objects.get()
    qid = Example.objects.order_by("qid").values_list("qid", flat=True).first()
    runs = sorted(Run.objects.values_list("run_id", flat=True))
    judge = JudgeVersion.objects.get()
    return {"queue": queue.pk, "qid": qid, "runs": runs, "judge": judge.pk, "url": live_server.url}


def pages(demo):
    """(user, path) for every page a role works on, the demo's own records in the paths."""
    q, qid, (a, b) = demo["queue"], demo["qid"], demo["runs"]
    ds = "stdlib-support"
    return [
        (None, "/login/"),
        ("expert", "/"),
        ("expert", "/datasets/"),
        ("expert", f"/datasets/{ds}/"),
        ("engineer", f"/datasets/{ds}/history/"),
        ("expert", "/corpus/?q=json"),
        ("expert", "/tagging/"),
        ("expert", f"/tagging/{ds}/"),
        ("expert", f"/tagging/{ds}/q/{qid}/"),
        ("expert", f"/tagging/{ds}/stats/"),
        ("expert", f"/tagging/{ds}/traffic/"),
        ("engineer", "/runs/"),
        ("engineer", f"/runs/{a}/"),
        ("engineer", f"/compare/?a={a}&b={b}"),
        ("engineer", "/series/"),
        ("engineer", "/judges/"),
        ("engineer", f"/judges/versions/{demo['judge']}/"),
        ("engineer", "/judges/new/"),
        ("engineer", "/queues/"),
        ("engineer", "/queues/new/"),
        ("engineer", f"/queues/{q}/stats/"),
        ("engineer", "/audits/"),
        ("annotator", "/"),
        ("annotator", "/queues/"),
        ("annotator", f"/queues/{q}/label/"),
        ("adjudicator", f"/queues/{q}/adjudicate/"),
        ("adjudicator", "/adjudication/"),
    ]


def sign_in(page, url, username):
    page.goto(f"{url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", demo_password(username))
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "/login/" not in page.url, username


def test_every_page_meets_wcag_aa_and_fits_800_px_and_a_phone(demo, browser, screenshot_dir):
    axe = Axe()
    problems: list[str] = []
    contexts = {}
    for user, path in pages(demo):
        if user not in contexts:
            contexts[user] = browser.new_context(viewport={"width": 1280, "height": 900})
            if user:
                sign_in(contexts[user].new_page(), demo["url"], user)
        page = contexts[user].new_page()
        failed: list[str] = []
        page.on("response", lambda r, failed=failed: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.set_viewport_size({"width": 1280, "height": 900})
        response = page.goto(demo["url"] + path)
        assert response.status == 200, (user, path, response.status)
        page.wait_for_load_state("networkidle")
        where = f"{path} ({user or 'signed out'})"
        # Nothing the page loads fails (its icon included): a 404 in the console is a broken page too.
        problems += [f"{where}: loading {miss}" for miss in failed]
        for violation in axe.run(page, options=WCAG_AA).response["violations"]:
            nodes = "; ".join(
                n["target"][0] if isinstance(n["target"][0], str) else str(n["target"]) for n in violation["nodes"][:3]
            )
            problems.append(f"{where}: {violation['id']} ({violation['impact']}): {nodes}")
        # Focus order is the page's order: no positive tabindex reorders it.
        for el in page.evaluate(POSITIVE_TABINDEX):
            problems.append(f"{where}: {el} has a positive tabindex, out of the page's focus order")
        for sel in page.evaluate(SELECTED):
            if sel["ratio"] < 3:
                problems.append(f"{where}: selected {sel['el']} stands out at {sel['ratio']:.2f}:1, under 3:1")
        for _ in range(12):
            page.keyboard.press("Tab")
            ring = page.evaluate(FOCUS_RING)
            message = (
                ring and ring["ratio"] < 3 and f"{where}: focus ring on {ring['el']} at {ring['ratio']}:1, under 3:1"
            )
            if message and message not in problems:
                problems.append(message)
        for width in (800, 390):
            page.set_viewport_size({"width": width, "height": 900})
            slug = "-".join(filter(None, path.split("?")[0].split("/"))) or "home"
            page.screenshot(path=screenshot_dir / f"a11y-{user or 'anon'}-{slug}-{width}.png", full_page=True)
            wide = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
            if wide > 1:
                problems.append(f"{where} at {width} px scrolls sideways by {wide} px: {page.evaluate(TOO_WIDE)}")
        page.close()
    for context in contexts.values():
        context.close()
    assert problems == [], "\n".join(problems)
