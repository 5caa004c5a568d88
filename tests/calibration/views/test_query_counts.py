"""The calibration pages and API issue a number of SQL statements that does not grow with the calibration
items they summarise or list: each is fetched over a small and a larger calibration under the same bound."""

import pytest

from calibration.services.judges import judge_version_create

# (calibration items, versions of the judge)
SIZES = [(12, 2), (48, 5)]

PAGES = {
    "judge version page": "/judges/versions/{version}/",
    "judge version page, judge fails": "/judges/versions/{version}/?direction=judge_fails&page=2",
    "judge version API": "/api/judge-versions/{version}/",
    "gate API": "/api/judge-versions/{version}/gate/",
    "calibration run page": "/judges/runs/{run}/",
    "calibration run API": "/api/calibration-runs/{run}/",
}
# Statements each page may issue, at every size.
BOUNDS = {
    "judge version page": 21,
    "judge version page, judge fails": 19,
    "judge version API": 9,
    "gate API": 9,
    "calibration run page": 7,
    "calibration run API": 5,
}


@pytest.mark.django_db
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_statements_do_not_grow_with_the_items(
    name, size, world, run_inline, client, make_user, django_assert_max_num_queries, monkeypatch
):
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", 2)
    items, versions = size
    for k in range(versions):
        version, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, params={"k": k})
        run = run_inline(version, size=items)
    client.force_login(make_user("eng", "engineer"))
    url = PAGES[name].format(version=version.pk, run=run.pk)
    client.get(url)  # the session and the caches warm
    with django_assert_max_num_queries(BOUNDS[name]):
        response = client.get(url)
    assert response.status_code == 200, response.content[:300]
