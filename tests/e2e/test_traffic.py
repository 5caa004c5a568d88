"""Browser: an expert assigns an unclassified traffic question a stratum and proposes traffic to tag on
/tagging/NAME/traffic/, at 1280 and 800 px, with no horizontal scroll; the proposals appear in the
tagging list marked "from traffic"."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from annotation.models import TrafficQuestion
from annotation.services.traffic import traffic_assign, traffic_import, traffic_rule_add
from tests.annotation.traffic_world import traffic_world
from tests.e2e.test_accessibility import WCAG_AA
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-" + "x" * 8  # the factories' password


def _fits(page):
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_assign_a_stratum_and_propose_questions(page, live_server, login, screenshot_dir, tmp_path):
    _dataset, path = traffic_world(tmp_path)
    traffic_import(path=path, dataset_name="shop")
    traffic_rule_add(dataset_name="shop", stratum="billing", kind="keyword", pattern="refund")
    traffic_assign(
        dataset_name="shop", ids=[TrafficQuestion.objects.get(text="Do you ship to Norway?").pk], stratum="other"
    )
    UserFactory(username="eve", roles=("expert",))
    login(page, "eve", PASSWORD)
    page.goto(f"{live_server.url}/tagging/shop/")
    page.click("#traffic-link")
    expect(page.locator("h1")).to_have_text("Production traffic and coverage: shop")
    expect(page.locator("#coverage tr.unclassified")).to_contain_text("44.4%")
    expect(page.locator("#coverage-warnings")).to_contain_text("stratum 'other': 3 x 0.111111 = 0.333333 < 1")
    page.check("#unclassified tr:has-text('Can I change my email address?') input[type=checkbox]")
    page.select_option("#assign-stratum", "account")
    with page.expect_navigation():
        page.click("#assign-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("1 question assigned to account.")
    expect(page.locator("#unclassified")).not_to_contain_text("Can I change my email address?")
    expect(page.locator("#coverage tr[data-stratum='account']")).to_contain_text("11.1%")
    # A rule added on the page classifies its matches at once (the regex is case-insensitive by its own flag).
    page.select_option("#rule-kind", "regex")
    page.fill("#rule-pattern", "(?i)^why was")
    page.select_option("#rule-stratum", "billing")
    with page.expect_navigation():
        page.click("#rule-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Rule added: regex '(?i)^why was' -> billing; 1 question")
    expect(page.locator("#rules")).to_contain_text("(?i)^why was")
    expect(page.locator("#unclassified")).not_to_contain_text("Why was my card charged twice?")
    page.fill("#propose-form input[name=k]", "3")
    with page.expect_navigation():
        page.click("#propose-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("3 traffic questions added to the tagging list")
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/tagging/shop/traffic/?n=9")
        _fits(page)
        page.screenshot(path=str(screenshot_dir / f"traffic_{width}.png"), full_page=True)
    # With rows in every table (the demo's page has no traffic): WCAG AA, as the accessibility pass checks.
    assert [v["id"] for v in Axe().run(page, options=WCAG_AA).response["violations"]] == []
    page.goto(f"{live_server.url}/tagging/shop/?status=untagged")
    expect(page.locator("#queue .from-traffic")).to_have_count(3)
    page.screenshot(path=str(screenshot_dir / "traffic_tagging_list_1280.png"), full_page=True)
