"""The version page's self-consistency in Chromium: calibrated with repeats from the page's own form,
then a judge that changes its mind shown with its intervals and the warning, at 1280 and 800 px."""

import re

import pytest
from playwright.sync_api import expect

from calibration.services.judges import judge_version_create
from tests.calibration.selectors.test_self_consistency import measured_with_repeats
from tests.calibration.world import load_world
from tests.e2e.test_judges import no_sideways_scroll

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def eager():
    from evalapp.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


def test_calibrating_with_repeats_from_the_page_shows_the_figures(
    page, live_server, login, make_user, tmp_path, eager, screenshot_dir
):
    load_world(tmp_path / "w", n=30)
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.5)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
    page.select_option("select[name=dataset]", "support")
    page.fill("input[name=sample]", "20")
    page.fill("input[name=repeats]", "3")
    page.click("button:has-text('Calibrate')")
    expect(page.get_by_test_id("run-status")).to_have_text("done")
    page.click("text=See the measurement and the gate")
    # The span judge answers the same every time.
    expect(page.get_by_test_id("flip-rate")).to_have_text("0.000")
    expect(page.get_by_test_id("kappa-self")).to_have_text("1.000")
    expect(page.get_by_test_id("self-consistency-warning")).to_have_count(0)


def test_a_judge_that_changes_its_mind_is_warned_at_both_widths(page, live_server, login, make_user, screenshot_dir):
    version, _ = measured_with_repeats()
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/versions/{version.pk}/")
    expect(page.get_by_test_id("flip-rate")).to_have_text("0.250")
    expect(page.get_by_test_id("kappa-self")).to_have_text("0.500")
    expect(page.get_by_test_id("self-consistency")).to_contain_text(re.compile(r"95% interval 0\.\d{3} to 0\.\d{3}"))
    expect(page.get_by_test_id("self-consistency-warning")).to_contain_text(
        "disagrees with itself more than with people"
    )
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert no_sideways_scroll(page) == [], width
        page.locator("#h-self").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"judge-self-consistency-{width}.png"))
