"""`repeats` on the calibration API, and the gate API's self_consistency."""

import json

import pytest

from calibration.models import CalibrationRun, CalibrationSample
from calibration.selectors.gates import judge_gate
from calibration.services.judges import judge_version_create


def span():
    return judge_version_create(judge_name="span-judge", backend="span")[0]


@pytest.mark.parametrize("repeats", [0, 21, "many"])
def test_repeats_out_of_range_is_http_400_naming_it_and_nothing_is_written(world, api_client_for, repeats):
    api = api_client_for("eng", "engineer")
    v = span()
    got = api.post(f"/api/judge-versions/{v.pk}/calibrate/", {"dataset": "support", "repeats": repeats}, format="json")
    assert got.status_code == 400
    assert "repeats" in json.dumps(got.json()) and "from 1 to 20" in json.dumps(got.json())
    assert (CalibrationRun.objects.count(), CalibrationSample.objects.count()) == (0, 0)


def test_repeats_start_a_run_and_the_gate_api_shows_self_consistency(
    world, api_client_for, django_capture_on_commit_callbacks, run_inline
):
    api = api_client_for("eng", "engineer")
    v = span()
    with django_capture_on_commit_callbacks(execute=False):
        started = api.post(
            f"/api/judge-versions/{v.pk}/calibrate/", {"dataset": "support", "sample": 12, "repeats": 3}, format="json"
        )
    assert started.status_code == 202
    body = started.json()
    assert (body["repeats"], body["total"]) == (3, 12)
    assert CalibrationRun.objects.get(pk=body["run"]).repeats == 3
    assert api.get(f"/api/calibration-runs/{body['run']}/").json()["repeats"] == 3
    api.post(f"/api/calibration-runs/{body['run']}/cancel/")
    measured = v  # measured again, by a run of its own
    run_inline(measured, size=12, repeats=3)
    gate = api.get(f"/api/judge-versions/{measured.pk}/gate/").json()
    assert gate == json.loads(json.dumps(judge_gate(measured)))
    # The span judge answers the same every time: it never flips, its kappa with itself is 1.
    consistency = gate["self_consistency"]
    assert (consistency["repeats"], consistency["n"], consistency["flip_rate"]) == (3, 12, 0.0)
    assert (consistency["kappa_self"], consistency["warning"]) == (1.0, False)
    detail = api.get(f"/api/judge-versions/{measured.pk}/").json()["gate"]
    assert detail["self_consistency"] == consistency and "per_annotator" in detail


def test_the_version_pages_form_takes_repeats_and_refuses_21(
    world, client, make_user, django_capture_on_commit_callbacks
):
    client.force_login(make_user("eng", "engineer"))
    v = span()
    refused = client.post(f"/judges/versions/{v.pk}/calibrate/", {"dataset": "support", "repeats": "21"}, follow=True)
    assert "repeats" in refused.content.decode() and "from 1 to 20" in refused.content.decode()
    assert (CalibrationRun.objects.count(), CalibrationSample.objects.count()) == (0, 0)
    with django_capture_on_commit_callbacks(execute=False):
        client.post(f"/judges/versions/{v.pk}/calibrate/", {"dataset": "support", "sample": "5", "repeats": "2"})
    assert CalibrationRun.objects.get().repeats == 2
