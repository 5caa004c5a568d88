"""The calibration run page's Cancel and Resume buttons live in the polled progress fragment, so they follow
the run: Cancel while it runs, Resume once it is cancelled or failed, none once it is done."""

import pytest
from django.test import Client

from calibration.models import CalibrationRun, CalibrationSample
from tests.factories import DatasetFactory, JudgeVersionFactory


@pytest.fixture
def run(db):
    version = JudgeVersionFactory()
    sample = CalibrationSample.objects.create(judge=version.judge, dataset=DatasetFactory(), size=0)
    return CalibrationRun.objects.create(judge_version=version, sample=sample, status="running")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "buttons", "polls"),
    [
        ("queued", ["Cancel", "Resume"], True),
        ("running", ["Cancel", "Resume"], True),
        ("cancelled", ["Resume"], False),
        ("failed", ["Resume"], False),
        ("done", [], False),
    ],
)
def test_the_buttons_follow_the_status_in_the_polled_fragment(run, make_user, status, buttons, polls):
    CalibrationRun.objects.filter(pk=run.pk).update(status=status)
    client = Client()
    client.force_login(make_user("eng", "engineer"))

    fragment = client.get(f"/judges/runs/{run.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    page = client.get(f"/judges/runs/{run.pk}/").content.decode()

    shown = [b for b in ("Cancel", "Resume") if f'<button type="submit">{b}</button>' in fragment]
    assert shown == buttons
    # the page shows the fragment's buttons once, with no second copy outside it to go stale
    assert [page.count(f'<button type="submit">{b}</button>') for b in ("Cancel", "Resume")] == [
        int(b in buttons) for b in ("Cancel", "Resume")
    ]
    assert ('hx-trigger="every 2s"' in fragment) is polls


@pytest.mark.django_db
def test_calibrating_from_the_page_says_what_is_wrong_and_how_many_were_used(
    world, make_user, django_capture_on_commit_callbacks
):
    """A refused form reads as a sentence naming the field; a sample larger than the labelled answers says
    how many the calibration uses. 60 answers are labelled in `world`."""
    from calibration.services.judges import judge_version_create

    version, _ = judge_version_create(judge_name="span-judge", backend="span")
    client = Client()
    client.force_login(make_user("eng", "engineer"))

    refused = client.post(
        f"/judges/versions/{version.pk}/calibrate/", {"dataset": "support", "sample": "lots"}, follow=True
    )
    assert (
        "Cannot start the calibration: the sample size must be a whole number from 1 to 1,000,000."
        in refused.content.decode()
    )
    assert not CalibrationRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=False):
        started = client.post(
            f"/judges/versions/{version.pk}/calibrate/", {"dataset": "support", "sample": "500"}, follow=True
        )
    run = CalibrationRun.objects.get()
    assert run.total == 60
    assert (
        "You asked for 500 answers; only 60 labelled answers could be sampled, so the calibration uses 60."
        in started.content.decode()
    )
