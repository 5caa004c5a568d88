"""Browser: the tagging and queue statistics pages say how long what is left would take, at 1280 and
800 px wide, with no horizontal scroll (tests/annotation/timing_world.py holds the figures' sources)."""

import pytest
from playwright.sync_api import expect

from tests.annotation.timing_world import queue_world, tagging_world
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-" + "x" * 8  # the factories' password
WIDTHS = (1280, 800)


def _fits(page):
    """No horizontal scroll: nothing on the page reaches past the window's right edge."""
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_the_tagging_stats_page_shows_the_projection(page, live_server, login, screenshot_dir):
    tagging_world()
    login(page, "eve", PASSWORD)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/tagging/timeset/stats/")
        expect(page.get_by_test_id("projection")).to_have_text(
            "The 6 untagged questions need about 6 min at the team's median (60 s a question)."
        )
        expect(page.locator("#time-excluded")).to_contain_text("Left out of the figures: 2 questions at 0 s.")
        expect(page.locator("#time-people tr[data-person='eve']")).to_contain_text("5 min")
        expect(page.locator("#time-people tr[data-person='ola']")).to_contain_text("no timing: 1 question")
        _fits(page)
        page.screenshot(path=str(screenshot_dir / f"label_time_tagging_{width}.png"), full_page=True)


def test_the_queue_stats_page_shows_the_projection(page, live_server, login, screenshot_dir):
    queue = queue_world()
    UserFactory(username="eng", roles=("engineer",))
    login(page, "eng", PASSWORD)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/queues/{queue.pk}/stats/")
        expect(page.get_by_test_id("projection")).to_have_text(
            "The 5 labels left need about 2 min at the team's median (20 s a label)."
        )
        expect(page.locator("#time-people tr[data-person='ann3']")).to_contain_text("no labels yet")
        _fits(page)
        page.screenshot(path=str(screenshot_dir / f"label_time_queue_{width}.png"), full_page=True)
