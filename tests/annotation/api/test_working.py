"""The working copy API: stale saves conflict, the audit names who changed what, publish makes the next version."""
import json

import pytest


@pytest.mark.django_db
def test_working_copy_api_conflicts_and_publish(loaded, api_client_for):
    alice, bob = api_client_for("alice", "expert"), api_client_for("bob", "expert")
    url = "/api/datasets/support/working/q-0001/"
    first = alice.patch(url, {"changes": {"expected": "thirty days"}, "base_revision": 0, "client_key": "a1"}, format="json")
    assert first.status_code == 200 and first.json()["revision"] == 1
    clash = bob.patch(url, {"changes": {"expected": "30"}, "base_revision": 0}, format="json")
    assert clash.status_code == 409 and "alice" in clash.json()["error"]
    assert alice.get(url).json()["record"]["expected"] == "thirty days"
    assert [a["user"] for a in alice.get("/api/datasets/support/audit/").json()["results"]] == ["alice"]
    published = alice.post("/api/datasets/support/publish/", {"note": "relabel"}, format="json")
    assert published.status_code == 201 and published.json()["modified"] == 1
    diff = alice.get(f"/api/datasets/support/diff/?old=1&new=2").json()
    assert (diff["modified"], diff["unchanged"]) == (["q-0001"], ["q-0002", "q-0003"])
    export = alice.get("/api/datasets/support/versions/2/export/")
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert json.loads(lines[0])["expected"] == "thirty days"
