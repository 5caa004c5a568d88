"""The runs list pages its runs, newest first, so every run is reachable however many there are."""

import datetime as dt
import re

import pytest

from comparisons.views import runs as runs_view
from tests.factories import RunFactory

pytestmark = pytest.mark.django_db

START = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)


@pytest.fixture
def twenty_runs(monkeypatch):
    monkeypatch.setattr(runs_view, "RUNS_PER_PAGE", 7)
    for k in range(20):
        RunFactory(run_id=f"r{k:02d}", started_at=START + dt.timedelta(hours=k))


def shown(page: str) -> list[str]:
    return re.findall(r'href="/runs/(r\d\d)/"', page)


def test_every_run_is_on_exactly_one_page_newest_first(client, make_user, twenty_runs):
    client.force_login(make_user("eng", "engineer"))
    pages = [client.get("/runs/", {"page": n}).content.decode() for n in (1, 2, 3)]
    assert [shown(p) for p in pages] == [
        [f"r{k:02d}" for k in range(19, 12, -1)],
        [f"r{k:02d}" for k in range(12, 5, -1)],
        [f"r{k:02d}" for k in range(5, -1, -1)],
    ]
    assert "page 1 of 3" in pages[0] and 'rel="next" href="?page=2"' in pages[0] and 'rel="prev"' not in pages[0]
    assert 'rel="prev" href="?page=2"' in pages[2] and 'rel="next"' not in pages[2]
    assert "runs 15–20 of 20" in pages[2]


@pytest.mark.parametrize("junk", ["0", "-3", "abc", "99", ""])
def test_a_page_that_is_not_there_shows_the_nearest_one(client, make_user, twenty_runs, junk):
    client.force_login(make_user("eng", "engineer"))
    response = client.get("/runs/", {"page": junk})
    assert response.status_code == 200
    # Django's Paginator.get_page: a number out of range shows the last page, anything else the first.
    expected = "r00" if junk in ("0", "-3", "99") else "r19"
    assert expected in shown(response.content.decode())


def test_the_compare_form_takes_any_run_id_and_suggests_the_pages_runs(client, make_user, twenty_runs):
    client.force_login(make_user("eng", "engineer"))
    page = client.get("/runs/", {"page": 2}).content.decode()
    assert '<input type="text" name="a" value="r11" list="run-ids"' in page
    assert '<input type="text" name="b" value="r12" list="run-ids"' in page
    assert re.findall(r'<option value="(r\d\d)">', page) == [f"r{k:02d}" for k in range(12, 5, -1)]
