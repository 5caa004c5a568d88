"""The progress page of a queued API import: it polls until the worker is done, then shows the result;
a refused upload shows its line and field problems."""

import pytest
from playwright.sync_api import expect

from annotation.models import ImportJob
from annotation.services.import_jobs import import_job_folder
from annotation.tasks import run_import_job
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import write_jsonl

PASSWORD = "pw-" + "x" * 8


def job_for(user, rows):
    # Made directly, not through import_job_start: no message may reach a broker from this test.
    folder, relative = import_job_folder()
    write_jsonl(folder / "upload.jsonl", rows)
    return ImportJob.objects.create(
        kind="run",
        user=user,
        upload=f"{relative}/upload.jsonl",
        upload_name="nightly.jsonl",
        upload_bytes=(folder / "upload.jsonl").stat().st_size,
        total_lines=len(rows),
        options={"strict": False},
    )


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_progress_page_polls_to_done_and_shows_refusals(
    page, live_server, login, loaded, make_user, screenshot_dir
):
    user = make_user("eng", "engineer", password=PASSWORD)
    job = job_for(user, [run_record(), *ANSWERS])
    login(page, "eng", PASSWORD)
    page.goto(f"{live_server.url}/imports/{job.pk}/")
    expect(page.get_by_test_id("import-status")).to_have_text("queued")
    expect(page.get_by_test_id("lines-read")).to_have_text("0 / 4")
    run_import_job(job.pk)  # the worker's part
    expect(page.get_by_test_id("import-status")).to_have_text("done", timeout=10_000)
    expect(page.get_by_test_id("lines-read")).to_have_text("4 / 4")
    expect(page.locator("#import-progress")).to_contain_text("r1")
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(screenshot_dir / f"import-job-done-{width}.png"), full_page=True)

    bad = job_for(user, [run_record("r2"), ANSWERS[0], {"qid": "q-0002", "answer": 3}])
    run_import_job(bad.pk)
    page.goto(f"{live_server.url}/imports/{bad.pk}/")
    expect(page.get_by_test_id("import-status")).to_have_text("failed")
    expect(page.get_by_test_id("import-error")).to_contain_text("line 3, field 'answer': must be a string")
    expect(page.get_by_test_id("import-error")).to_contain_text("nightly.jsonl: 1 problem(s); nothing was imported")
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(screenshot_dir / f"import-job-failed-{width}.png"), full_page=True)
