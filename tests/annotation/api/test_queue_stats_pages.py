"""GET /api/queues/ID/stats/ lists disagreements, flags and skips a page at a time: `?limit=` (default 100,
at most 1000), a cursor `?disagreements_after=` for the disagreements and `?reviews_offset=` for flags
and skips, with counts of them all on every page."""

import pytest

from annotation.selectors.blind import OPERATOR
from annotation.selectors.queue_pairs import disagreement_counts, pair_counts
from annotation.services.claims import item_skip, queue_next
from annotation.services.labelling import item_flag, label_submit

# Per item in hand-out order, (ann1, ann2): items 1, 3, 4, 6 and 7 disagree.
VERDICTS = [
    ("correct", "correct"),
    ("correct", "incorrect"),
    ("incorrect", "incorrect"),
    ("incorrect", "correct"),
    ("correct", "incorrect"),
    ("correct", "correct"),
    ("incorrect", "correct"),
    ("correct", "incorrect"),
    ("correct", "correct"),
]


def label_all(queue, pool):
    """Label every item with its row of VERDICTS; the keys of the disagreeing items, in item id order."""
    disagreeing = []
    for first, second in VERDICTS:
        claim = queue_next(queue=queue, annotator=pool["ann1"])
        assert claim is not None
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], verdict=first)
        other = queue_next(queue=queue, annotator=pool["ann2"])
        assert other is not None and other.item.pk == claim.item.pk
        label_submit(queue=queue, item_id=claim.item.pk, annotator=pool["ann2"], verdict=second)
        if first != second:
            disagreeing.append((claim.item.pk, claim.item.key))
    return [key for _pk, key in sorted(disagreeing)]


@pytest.mark.django_db
def test_the_disagreements_page_by_cursor_and_count_them_all(make_queue, pool, api_client_for):
    queue = make_queue(len(VERDICTS))
    want = label_all(queue, pool)
    assert len(want) == 5
    eng = api_client_for("eng", "engineer")
    url = f"/api/queues/{queue.pk}/stats/?iters=10&limit=2"
    seen, pages, after = [], [], None
    while True:
        ag = eng.get(url + (f"&disagreements_after={after}" if after else "")).json()["agreement"]
        assert ag["disagreements_count"] == 5
        pages.append(len(ag["disagreements"]))
        seen += [d["item_id"] for d in ag["disagreements"]]
        after = ag["disagreements_next"]
        if after is None:
            break
        assert after == ag["disagreements"][-1]["item_id"]
    assert pages == [2, 2, 1]
    assert seen == want
    whole = eng.get(f"/api/queues/{queue.pk}/stats/?iters=10").json()["agreement"]
    assert [d["item_id"] for d in whole["disagreements"]] == want  # 5 fit the default page of 100
    assert whole["disagreements_next"] is None
    assert sum(whole["disagreements_by_stratum"].values()) == 5


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("limit=0", "limit", "must be a whole number from 1 to 1000"),
        ("limit=1001", "limit", "must be a whole number from 1 to 1000"),
        ("reviews_offset=-1", "reviews_offset", "must be a whole number from 0 to 1000000000"),
        ("disagreements_after=nosuchitem", "disagreements_after", "no item 'nosuchitem' in this queue"),
    ],
)
def test_bad_page_parameters_are_400_naming_the_field(make_queue, pool, api_client_for, query, field, message):
    queue = make_queue(2)
    response = api_client_for("eng", "engineer").get(f"/api/queues/{queue.pk}/stats/?{query}")
    assert response.status_code == 400
    assert any(p.get("field") == field and message in p["message"] for p in response.json()["problems"]), (
        response.json()
    )


@pytest.mark.django_db
def test_flags_and_skips_page_by_offset_with_their_counts(make_queue, pool, api_client_for):
    queue = make_queue(5, annotators=("ann1", "ann2", "ann3"))
    flagged = []
    for _ in range(3):
        claim = queue_next(queue=queue, annotator=pool["ann1"])
        assert claim is not None
        item_flag(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], reason="unclear question")
        item_skip(queue=queue, item_id=claim.item.pk, annotator=pool["ann1"], reason="cannot tell")
        flagged.append(claim.item.key)
    eng = api_client_for("eng", "engineer")
    first = eng.get(f"/api/queues/{queue.pk}/stats/?iters=0&limit=2").json()
    assert (first["flags_count"], first["skips_count"]) == (3, 3)
    assert len(first["flags"]) == len(first["skips"]) == 2
    assert first["reviews_next_offset"] == 2
    rest = eng.get(f"/api/queues/{queue.pk}/stats/?iters=0&limit=2&reviews_offset=2").json()
    assert (rest["flags_count"], rest["skips_count"], rest["reviews_next_offset"]) == (3, 3, None)
    assert sorted(f["item_id"] for f in first["flags"] + rest["flags"]) == sorted(flagged)
    assert [s["reason"] for s in first["skips"] + rest["skips"]] == ["cannot tell"] * 3
    whole = eng.get(f"/api/queues/{queue.pk}/stats/?iters=0").json()
    assert (len(whole["flags"]), whole["flags_count"], whole["reviews_next_offset"]) == (3, 3, None)
    assert whole["progress"]["flagged"] == 3 and whole["progress"]["skipped"] == 3


@pytest.mark.django_db
def test_overlap_2_counts_disagreements_off_the_pairs_as_the_items_give_them(make_queue, pool):
    queue = make_queue(len(VERDICTS))
    label_all(queue, pool)
    pairs = pair_counts(queue, OPERATOR)
    from_pairs = disagreement_counts(queue, OPERATOR, pairs)
    assert from_pairs == disagreement_counts(queue, OPERATOR)  # the grouped count of the items
    assert sum(from_pairs.values()) == 5
