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
    dataset = f.DatasetFactory.create(name="grown")
    f.version(dataset, [f.record(f"q-{k:03d}") for k in range(size)])
    url = "/api/datasets/grown/working/"
    assert (
        api.patch(f"{url}q-001/", {"changes": {"expected": "edited"}, "base_revision": 0}, format="json").status_code
        == 200
    )
    # A question removed in the working copy (the record null), as a tagging session's removal leaves it.
    from annotation.models import WorkingExample

    WorkingExample.objects.create(dataset=dataset, qid="q-002", base_version=dataset.versions.get(), record=None)
    listed = {item["qid"]: item for item in api.get(f"{url}?page_size=1000").json()["results"]}
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


def walk(api, url: str) -> tuple[list[str], list[int]]:
    """Every qid a cursor walk of the list gives, and the count each page states."""
    qids, counts = [], []
    while url:
        body = api.get(url).json()
        qids += [item["qid"] for item in body["results"]]
        counts.append(body["count"])
        url = body["next"]
    return qids, counts


@pytest.mark.django_db
def test_the_list_is_cursor_paged_by_qid_in_code_point_order_with_the_tagging_filters(api_client_for):
    from annotation.models import WorkingExample
    from tests import factories as f

    api = api_client_for("alice", "expert")
    dataset = f.DatasetFactory.create(name="grown")
    qids = ["q-10", "Q-7", "q-2", "q-1", "é-1", "q-3"]
    records = [f.record(q, stratum="billing" if k % 2 else "policy") for k, q in enumerate(qids)]
    records[2].update(gold_chunk_id="c-1", gold_doc_id="d", gold_text="x")
    latest = f.version(dataset, records)
    WorkingExample.objects.create(dataset=dataset, qid="q-0", base_version=latest, record=f.record("q-0"))
    WorkingExample.objects.create(dataset=dataset, qid="q-3", base_version=latest, record=None)
    url = "/api/datasets/grown/working/"

    everything = sorted([*qids, "q-0"])
    everything.remove("q-3")
    assert walk(api, f"{url}?page_size=2") == (everything, [6, 6, 6])
    first = api.get(f"{url}?page_size=2").json()
    assert (first["count"], first["previous"], [i["qid"] for i in first["results"]]) == (6, None, ["Q-7", "q-0"])
    second = api.get(first["next"]).json()
    assert [i["qid"] for i in api.get(second["previous"]).json()["results"]] == ["Q-7", "q-0"]
    assert walk(api, f"{url}?page_size=4&stratum=billing") == (["Q-7", "q-1"], [2])
    assert walk(api, f"{url}?status=tagged") == (["q-2"], [1])
    assert walk(api, f"{url}?status=untagged&stratum=policy") == (["q-10", "é-1"], [2])
    # The default page is the other lists' (50), and a page holds the item as the item endpoint gives it.
    default = api.get(url).json()
    assert len(default["results"]) == 6 and default["next"] is None
    assert default["results"][1] == api.get(f"{url}q-0/").json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=done", "status"),
        ("page_size=0", "page_size"),
        ("cursor=bm9wZQ", "cursor"),
        ("stratum=" + "s" * 101, "stratum"),
    ],
)
def test_a_bad_filter_or_cursor_is_400_naming_it(api_client_for, query, field):
    from tests import factories as f

    api = api_client_for("alice", "expert")
    f.version(f.DatasetFactory.create(name="grown"), [f.record("q-1")])
    answer = api.get(f"/api/datasets/grown/working/?{query}")
    assert answer.status_code == 400
    assert [p["field"] for p in answer.json()["problems"]] == [field]


@pytest.mark.django_db
@pytest.mark.parametrize("size", [60, 600])
def test_a_page_costs_the_same_statements_however_large_the_set(size, api_client_for, django_assert_max_num_queries):
    from tests import factories as f

    api = api_client_for("alice", "expert")
    f.version(f.DatasetFactory.create(name="grown"), [f.record(f"q-{k:04d}", stratum=f"s{k % 3}") for k in range(size)])
    url = "/api/datasets/grown/working/?page_size=20"
    first = api.get(url).json()
    # Token and user, their roles, the dataset, its latest version, the pending edits, the count, the page,
    # the revisions of its questions edited on an earlier version.
    with django_assert_max_num_queries(8):
        deep = api.get(first["next"]).json()
    assert [i["qid"] for i in deep["results"]] == [f"q-{k:04d}" for k in range(20, 40)]
    with django_assert_max_num_queries(8):
        filtered = api.get(url + "&status=untagged&stratum=s1").json()
    assert (filtered["count"], filtered["results"][0]["qid"]) == (size // 3, "q-0001")
