"""A queue statistics page lists its disagreements a page at a time with their count, filtered by stratum,
and the filter kept in the page links; the API keeps the whole list and its count."""

import re

import pytest

from tests.annotation.views.test_query_counts import queue_world


def shown(html: str) -> list[str]:
    return re.findall(r'<tr data-testid="disagreement"><td>[^<]*</td><td class="mono">([^<]*)</td>', html)


@pytest.mark.django_db
def test_disagreements_are_paged_and_filtered(client, api_client_for, monkeypatch):
    monkeypatch.setattr("annotation.views.queues.DISAGREEMENTS_PER_PAGE", 2)
    queue, engineer = queue_world(12)  # items 0, 3, 6, 9 disputed, all of stratum policy_lookup
    client.force_login(engineer)
    url = f"/queues/{queue.pk}/stats/"

    first = client.get(url).content.decode()
    second = client.get(url + "?page=2").content.decode()
    assert "Disagreements (4)" in first
    assert "1–2 of 4" in first and "3–4 of 4" in second
    assert shown(first) + shown(second) == ["q-000", "q-003", "q-006", "q-009"]
    assert 'rel="next" href="?page=2#h-dis"' in first

    kept = client.get(url + "?stratum=policy_lookup").content.decode()
    assert 'rel="next" href="?stratum=policy_lookup&amp;page=2#h-dis"' in kept
    assert shown(kept) == ["q-000", "q-003"]
    none = client.get(url + "?stratum=how_to").content.decode()
    assert "Disagreements (0)" in none and shown(none) == []
    assert client.get(url + "?page=lots").status_code == 400

    api = client.get(f"/api/queues/{queue.pk}/stats/?iters=0").json()["agreement"]
    assert [d["qid"] for d in api["disagreements"]] == ["q-000", "q-003", "q-006", "q-009"]
    assert api["disagreements_count"] == 4
    assert api["disagreements"][0]["labels"] == {"ann1": "correct", "ann2": "incorrect"}
