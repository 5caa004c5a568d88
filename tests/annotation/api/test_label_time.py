"""GET /api/datasets/{name}/label-time/ and /api/queues/{id}/label-time/: the selectors' reports, for the
roles of the statistics pages, with query parameters refused by name and timing only for a pool member."""

import pytest

from annotation.models import QueueMember
from annotation.selectors.label_time import queue_label_time, tagging_time
from tests.annotation.timing_world import queue_world, tagging_world

pytestmark = pytest.mark.django_db


def test_the_tagging_report_for_experts_and_engineers(api_client_for):
    dataset = tagging_world()
    for name, role in (("exp", "expert"), ("eng", "engineer")):
        response = api_client_for(name, role).get("/api/datasets/timeset/label-time/")
        assert response.status_code == 200
        assert response.json() == tagging_time(dataset)
    narrowed = api_client_for("exp", "expert").get("/api/datasets/timeset/label-time/", {"min_seconds": "45"})
    assert narrowed.json() == tagging_time(dataset, min_seconds=45)


@pytest.mark.parametrize("role", ["annotator", "adjudicator"])
def test_the_tagging_report_is_refused_to_other_roles(api_client_for, role):
    tagging_world()
    assert api_client_for("someone", role).get("/api/datasets/timeset/label-time/").status_code == 403


def test_the_queue_report_for_engineers_and_adjudicators(api_client_for):
    queue = queue_world()
    for name, role in (("eng", "engineer"), ("adj", "adjudicator")):
        response = api_client_for(name, role).get(f"/api/queues/{queue.pk}/label-time/")
        assert response.status_code == 200
        assert response.json() == queue_label_time(queue)


@pytest.mark.parametrize("role", ["annotator", "expert"])
def test_the_queue_report_is_refused_to_other_roles(api_client_for, role):
    queue = queue_world()
    response = api_client_for("ann1", role).get(f"/api/queues/{queue.pk}/label-time/")
    assert response.status_code == 403


def test_a_pool_member_who_manages_queues_gets_timing_only(api_client_for):
    queue = queue_world()
    api = api_client_for("eng_ann", "engineer", "annotator")
    QueueMember.objects.create(queue=queue, user=api.user)
    response = api.get(f"/api/queues/{queue.pk}/label-time/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "SECRET-RATIONALE" not in body and "correct" not in body and "verdict" not in body
    assert [p["username"] for p in response.json()["people"]] == ["ann1", "ann2", "ann3", "ann4", "eng_ann"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "query parameter 'min_seconds': must be a number from 0 to 86400"),
        ("-1", "query parameter 'min_seconds': must be a number from 0 to 86400"),
        ("nan", "query parameter 'min_seconds': must be a number from 0 to 86400"),
        ("86401", "query parameter 'min_seconds': must be a number from 0 to 86400"),
    ],
)
def test_a_bad_min_seconds_is_a_400_naming_the_parameter(api_client_for, value, message):
    queue = queue_world()
    tagging_world()
    api = api_client_for("eng", "engineer")
    for url in (f"/api/queues/{queue.pk}/label-time/", "/api/datasets/timeset/label-time/"):
        response = api.get(url, {"min_seconds": value})
        assert response.status_code == 400
        assert response.json()["error"] == message


def test_unknown_dataset_and_queue_are_404(api_client_for):
    api = api_client_for("eng", "engineer")
    assert api.get("/api/datasets/nope/label-time/").json() == {"error": "unknown dataset 'nope'", "problems": []}
    response = api.get("/api/queues/999/label-time/")
    assert (response.status_code, response.json()) == (404, {"error": "unknown queue 999", "problems": []})
