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
