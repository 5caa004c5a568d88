"""The item endpoints of a labelling day: a second label needs `change` (409 naming both verdicts without
it), skip and flag with reasons, and `mine/` (progress, the guideline as shown, my labels on open items).
Flags reach engineers and adjudicators through the statistics only, never another annotator."""

import pytest

from annotation.models import Assignment, HumanLabel, LabelEvent, QueueItem

REASON = "FLAG-REASON-gold-contradicts-expected"


@pytest.fixture
def day(api_client_for, make_run):
    eng = api_client_for("eng", "engineer")
    clients = {name: api_client_for(name, "annotator") for name in ("alice", "bob", "carol")}
    created = eng.post(
        "/api/queues/",
        {
            "name": "day",
            "run_id": make_run(2),
            "overlap": 2,
            "annotators": ["alice", "bob", "carol"],
            "rubric": "Grade against the expected answer.",
        },
        format="json",
    )
    assert created.status_code == 201
    return {"eng": eng, "q": created.json()["id"], **clients}


def _state():
    return (
        list(HumanLabel.objects.order_by("id").values_list("annotator__username", "verdict", "rationale")),
        LabelEvent.objects.count(),
        list(Assignment.objects.order_by("id").values_list("state", "skip_reason", "flag_reason")),
    )


@pytest.mark.django_db
def test_a_second_label_without_change_is_409_and_with_change_it_keeps_the_history(day):
    alice, q = day["alice"], day["q"]
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    url = f"/api/queues/{q}/items/{item}/label/"
    assert alice.post(url, {"verdict": "correct", "rationale": "says 0 days"}, format="json").status_code == 201
    before = _state()

    refused = alice.post(url, {"verdict": "incorrect"}, format="json")
    assert (refused.status_code, refused.json()["error"]) == (409, "you labelled this correct; change to incorrect?")
    assert _state() == before
    again = alice.post(url, {"verdict": "correct"}, format="json")
    assert (again.status_code, again.json()["outcome"]) == (201, "unchanged")
    assert _state() == before

    changed = alice.post(url, {"verdict": "incorrect", "rationale": "misread", "change": True}, format="json")
    assert (changed.status_code, changed.json()) == (
        201,
        {"item_id": item, "verdict": "incorrect", "rationale": "misread", "outcome": "changed"},
    )
    assert list(LabelEvent.objects.order_by("id").values_list("old_verdict", "new_verdict", "rationale")) == [
        ("", "correct", "says 0 days"),
        ("correct", "incorrect", "misread"),
    ]


@pytest.mark.django_db
def test_skip_with_a_reason_hands_the_item_to_another_annotator(day):
    alice, bob, carol, q = day["alice"], day["bob"], day["carol"], day["q"]
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    assert bob.post(f"/api/queues/{q}/next/").json()["item_id"] == item  # fullest first: the same item
    url = f"/api/queues/{q}/items/{item}/skip/"

    missing = alice.post(url, {}, format="json")
    blank = alice.post(url, {"reason": "  "}, format="json")
    assert (missing.status_code, blank.status_code) == (400, 400)
    assert blank.json()["problems"][0]["field"] == "reason"
    assert carol.post(url, {"reason": "never had it"}, format="json").status_code == 409
    assert Assignment.objects.filter(state="skipped").count() == 0

    skipped = alice.post(url, {"reason": "needs pricing knowledge"}, format="json")
    assert skipped.status_code == 201
    assert (skipped.json()["item_id"], skipped.json()["reason"]) == (item, "needs pricing knowledge")
    assert carol.post(f"/api/queues/{q}/next/").json()["item_id"] == item
    assert alice.post(f"/api/queues/{q}/next/").json()["item_id"] != item
    stats = day["eng"].get(f"/api/queues/{q}/stats/?iters=0").json()
    assert [(s["item_id"], s["annotator"], s["reason"]) for s in stats["skips"]] == [
        (item, "alice", "needs pricing knowledge")
    ]
    assert stats["progress"]["skipped"] == 1


@pytest.mark.django_db
def test_a_flag_reaches_the_engineer_and_never_another_annotator(day):
    alice, bob, q = day["alice"], day["bob"], day["q"]
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    flagged = alice.post(f"/api/queues/{q}/items/{item}/flag/", {"reason": REASON}, format="json")
    assert (flagged.status_code, flagged.json()["reason"]) == (201, REASON)
    twice = alice.post(f"/api/queues/{q}/items/{item}/flag/", {"reason": "again"}, format="json")
    assert twice.status_code == 409
    assert list(Assignment.objects.exclude(flagged_at=None).values_list("flag_reason", flat=True)) == [REASON]

    assert bob.post(f"/api/queues/{q}/next/").json()["item_id"] == item
    for response in (
        bob.get(f"/api/queues/{q}/items/{item}/"),
        bob.get(f"/api/queues/{q}/mine/"),
        bob.get(f"/api/queues/{q}/"),
        bob.get("/api/queues/"),
    ):
        assert response.status_code == 200
        assert REASON not in response.content.decode() and "alice" not in response.content.decode()
    assert bob.get(f"/api/queues/{q}/stats/").status_code == 403

    stats = day["eng"].get(f"/api/queues/{q}/stats/?iters=0").json()
    assert [(f["item_id"], f["annotator"], f["reason"], f["status"]) for f in stats["flags"]] == [
        (item, "alice", REASON, "open")
    ]
    assert stats["progress"]["flagged"] == 1


@pytest.mark.django_db
def test_mine_gives_progress_the_guideline_as_shown_and_my_open_labels(day):
    alice, q = day["alice"], day["q"]
    first = alice.get(f"/api/queues/{q}/mine/").json()
    assert first == {
        "progress": {"done": 0, "skipped": 0, "left": 2},
        "guideline": {"text": "Grade against the expected answer.", "version": 1, "expanded": True, "changed": False},
        "previous": [],
    }
    item = alice.post(f"/api/queues/{q}/next/").json()["item_id"]
    alice.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct", "rationale": "fine"}, format="json")
    mine = alice.get(f"/api/queues/{q}/mine/").json()
    assert mine["progress"] == {"done": 1, "skipped": 0, "left": 1}
    assert mine["guideline"]["expanded"] is False
    assert [(p["item_id"], p["verdict"], p["rationale"], p["flagged"]) for p in mine["previous"]] == [
        (item, "correct", "fine", False)
    ]
    assert mine["previous"][0]["question"].startswith("How long does plan")

    assert day["eng"].post(f"/api/queues/{q}/rubric/", {"rubric": "New rule."}, format="json").status_code == 201
    guideline = alice.get(f"/api/queues/{q}/mine/").json()["guideline"]
    assert guideline == {"text": "New rule.", "version": 2, "expanded": True, "changed": True}

    # Once the item is complete it leaves "previous" (it can no longer change there).
    bob = day["bob"]
    assert bob.post(f"/api/queues/{q}/next/").json()["item_id"] == item
    bob.post(f"/api/queues/{q}/items/{item}/label/", {"verdict": "correct"}, format="json")
    assert QueueItem.objects.get(key=item).status == "agreed"
    assert alice.get(f"/api/queues/{q}/mine/").json()["previous"] == []
    assert day["eng"].get(f"/api/queues/{q}/mine/").status_code == 403
