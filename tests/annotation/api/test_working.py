"""The working copy API: stale saves conflict, the audit names who changed what, publish makes the next version."""

import json

import pytest


@pytest.mark.django_db
def test_working_copy_api_conflicts_and_publish(loaded, api_client_for):
    alice, bob = api_client_for("alice", "expert"), api_client_for("bob", "expert")
    url = "/api/datasets/support/working/q-0001/"
    first = alice.patch(
        url, {"changes": {"expected": "thirty days"}, "base_revision": 0, "client_key": "a1"}, format="json"
    )
    assert first.status_code == 200 and first.json()["revision"] == 1
    clash = bob.patch(url, {"changes": {"expected": "30"}, "base_revision": 0}, format="json")
    assert clash.status_code == 409 and "alice" in clash.json()["error"]
    assert alice.get(url).json()["record"]["expected"] == "thirty days"
    assert [a["user"] for a in alice.get("/api/datasets/support/audit/").json()["results"]] == ["alice"]
    published = alice.post("/api/datasets/support/publish/", {"note": "relabel"}, format="json")
    assert published.status_code == 201 and published.json()["modified"] == 1
    diff = alice.get("/api/datasets/support/diff/?old=1&new=2").json()
    assert (diff["modified"], diff["unchanged"]) == (["q-0001"], ["q-0002", "q-0003"])
    export = alice.get("/api/datasets/support/versions/2/export/")
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert json.loads(lines[0])["expected"] == "thirty days"


@pytest.mark.django_db
@pytest.mark.parametrize("size", [3, 40])
def test_one_question_is_the_list_s_entry_read_in_statements_that_do_not_grow_with_the_set(
    size, api_client_for, django_assert_max_num_queries
):
    from tests import factories as f

    api = api_client_for("alice", "expert")
    dataset = f.DatasetFactory(name="grown")
    f.version(dataset, [f.record(f"q-{k:03d}") for k in range(size)])
    url = "/api/datasets/grown/working/"
    assert (
        api.patch(f"{url}q-001/", {"changes": {"expected": "edited"}, "base_revision": 0}, format="json").status_code
        == 200
    )
    # A question removed in the working copy (the record null), as a tagging session's removal leaves it.
    from annotation.models import WorkingExample

    WorkingExample.objects.create(dataset=dataset, qid="q-002", base_version=dataset.versions.get(), record=None)
    listed = {item["qid"]: item for item in api.get(url).json()}
    assert len(listed) == size - 1 and "q-002" not in listed
    for qid in ("q-000", "q-001"):
        api.get(f"{url}{qid}/")
        with django_assert_max_num_queries(9):
            one = api.get(f"{url}{qid}/")
        assert one.json() == listed[qid]
    assert (listed["q-001"]["edited"], listed["q-001"]["revision"], listed["q-001"]["record"]["expected"]) == (
        True,
        1,
        "edited",
    )
    removed = api.get(f"{url}q-002/")
    assert (removed.status_code, removed.json()["error"]) == (404, "unknown question 'q-002' in dataset 'grown'")
