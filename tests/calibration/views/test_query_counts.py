"""The calibration pages and API issue a number of SQL statements that does not grow with the calibration
items they summarise or the judge versions they list: each is fetched over a small and a larger world
(more items, more versions, one of them stale) under the same bound."""

import pytest
from django.utils import timezone

from annotation.models import Answer
from calibration.models import SampleItem
from calibration.selectors.gates import judge_gates
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
    "judges list": "/judges/",
    "judge versions API": "/api/judge-versions/",
}
# Statements each page may issue, at every size. One version's gate (the gate and version APIs, the version
# page) reads the per-annotator table in two statements (verdicts, labels) and the own-family lenience in one
# when the judge's family is known (here it is not); the version page also reads the served-model history.
BOUNDS = {
    "judge version page": 24,
    "judge version page, judge fails": 22,
    "judge version API": 12,
    "gate API": 12,
    "calibration run page": 7,
    "calibration run API": 5,
    "judges list": 12,
    "judge versions API": 10,
}


@pytest.mark.django_db
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_statements_do_not_grow_with_the_items(
    name, size, world, run_inline, client, make_user, fetch_within, monkeypatch
):
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", 2)
    items, versions = size
    for k in range(versions):
        version, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, params={"k": k})
        run = run_inline(version, size=items)
    # Another judge's versions on the lists too: one unmeasured, one whose labels moved since (stale).
    judge_version_create(judge_name="other-judge", backend="span", min_n=10)
    stale, _ = judge_version_create(judge_name="other-judge", backend="span", min_n=10, params={"k": "stale"})
    run_inline(stale, size=items)
    Answer.objects.filter(
        pk=SampleItem.objects.filter(sample__runs__judge_version=stale).values("answer_id")[:1]
    ).update(final_changed_at=timezone.now())
    assert judge_gates([stale])[stale.pk]["status"] == "stale"
    client.force_login(make_user("eng", "engineer"))
    fetch_within(PAGES[name].format(version=version.pk, run=run.pk), BOUNDS[name])
