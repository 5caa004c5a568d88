"""The judge pages in Chromium: a version's evidence, and a run's progress refreshing live."""

import re

import pytest
from playwright.sync_api import expect

from calibration import tasks
from calibration.services import engine
from calibration.services.calibration import calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create
from tests.calibration.world import load_world

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def eager():
    """Page tests do not test Celery (tests/celery does): tasks sent by the pages run in this process."""
    from evalapp.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


def test_version_page_shows_the_evidence(page, live_server, login, make_user, tmp_path, eager, screenshot_dir):
    load_world(tmp_path / "w", n=60)
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.5)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.click("text=Judges")
    expect(page.get_by_test_id(f"status-{v.pk}")).to_have_text("unmeasured")
    page.click(f"a[href='/judges/versions/{v.pk}/']")
    page.select_option("select[name=dataset]", "support")
    page.fill("input[name=sample]", "30")
    page.click("button:has-text('Calibrate')")
    expect(page.get_by_test_id("run-status")).to_have_text("done")
    page.click("text=See the measurement and the gate")
    expect(page.get_by_test_id("gate-status")).to_have_text("pass")
    expect(page.get_by_test_id("kappa")).to_have_text(re.compile(r"^0\.\d{3}$"))
    expect(page.get_by_test_id("ceiling")).to_have_text("1.000")
    assert page.get_by_test_id("disagreement").count() > 0
    assert page.locator("svg[aria-label='kappa by version with the threshold line'] circle").count() == 1
    page.screenshot(path=str(screenshot_dir / "judge-version.png"), full_page=True)


def test_progress_page_refreshes_while_the_run_goes(
    page, live_server, login, make_user, tmp_path, monkeypatch, screenshot_dir
):
    load_world(tmp_path / "w", n=30)
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10)
    monkeypatch.setattr(engine, "dispatch_on_commit", lambda **_kw: None)  # the test plays the worker below
    run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=20, chunk_size=10)
    make_user("eng", "engineer", password="pw-engineer")  # judge pages are the engineers'
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/runs/{run.pk}/")
    expect(page.get_by_test_id("done")).to_have_text("0 / 20")
    pending = pending_item_ids(run)
    tasks.judge_chunk.apply(args=(run.pk, pending[:10]), throw=True)
    expect(page.get_by_test_id("done")).to_have_text("10 / 20", timeout=10_000)
    page.screenshot(path=str(screenshot_dir / "calibration-progress.png"), full_page=True)
    tasks.judge_chunk.apply(args=(run.pk, pending[10:]), throw=True)
    expect(page.get_by_test_id("run-status")).to_have_text("done", timeout=10_000)
    expect(page.get_by_test_id("done")).to_have_text("20 / 20")
