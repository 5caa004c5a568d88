"""A measurement's disagreements on one criterion: the items whose judge value differs from the final human
value (an ordinal distance above 0, with the distance; invalid values listed with none; disputed answers, with
no final value, never), on the page filter and in `GET /api/judge-versions/ID/disagreements/`."""

import json

import pytest

from annotation.models import Run
from annotation.selectors.blind import BlindScope
from calibration.models import Measurement
from calibration.selectors.criterion_disagreements import criterion_disagreement_rows
from calibration.selectors.diagnostics import disagreement_ids
from tests.calibration.services.test_judge_criteria import (  # noqa: F401  (the rated fixture)
    SCALE,
    human_faith,
    judge_faith,
    rated,
    replay_version,
    verdict_lines,
)
from tests.conftest import run_cmd, write_jsonl

# Faithfulness: agreed where i % 7 (the rest disputed, no final value); the judge one step high where i % 4 == 0
# and the human's value is not already 5. Tone: the judge says rude where i % 5 == 0 and gives none on q-0005.
FAITH = [i for i in range(60) if i % 7 and i % 4 == 0 and human_faith(i) != "5"]
TONE = [i for i in range(60) if i % 5 == 0]


@pytest.fixture
def measured(rated, tmp_path, run_inline):
    version = replay_version("external", "faithfulness=0.5", "tone")
    code, _out, err = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())), "--judge-version", str(version.pk)
    )
    assert code == 0, err
    run = run_inline(version, size=60)
    return version, Measurement.objects.get(run=run)


def _qids(rows, measurement):
    from calibration.models import Verdict

    qid = dict(Verdict.objects.filter(run=measurement.run).values_list("pk", "item__answer__qid"))
    return [(qid[r["verdict"]], r["human"], r["judge"], r["distance"]) for r in rows]


@pytest.mark.django_db
def test_each_criterion_lists_the_items_the_judge_values_differently(measured):
    _version, m = measured
    faith = _qids(criterion_disagreement_rows(m, "faithfulness"), m)
    expected = [(f"q-{i:04d}", human_faith(i), judge_faith(i), 1) for i in FAITH]
    assert [int(q[2:]) for q, *_ in expected] == [8, 12, 16, 20, 32, 36, 40, 48, 52]
    assert sorted(faith) == expected
    tone = _qids(criterion_disagreement_rows(m, "tone"), m)
    assert sorted(tone) == [
        (f"q-{i:04d}", "kind" if i % 2 else "neutral", "invalid" if i == 5 else "rude", None) for i in TONE
    ]
    assert [r[0] for r in _qids(criterion_disagreement_rows(m, "tone", direction="invalid"), m)] == ["q-0005"]
    assert len(criterion_disagreement_rows(m, "faithfulness", direction="judge_passes")) == 9
    assert criterion_disagreement_rows(m, "faithfulness", direction="judge_fails") == []
    strata = {r[0] for r in _qids(criterion_disagreement_rows(m, "faithfulness", stratum="numeric"), m)}
    assert strata and strata < {q for q, *_ in expected}
    # A viewer blind to the run sees none of its items (each row names its run).
    blind = BlindScope(user_id=1, roles=frozenset({"engineer"}), run_ids=frozenset({Run.objects.get().pk}))
    assert criterion_disagreement_rows(m, "faithfulness", scope=blind) == []


@pytest.mark.django_db
def test_the_api_pages_a_criterion_and_refuses_a_bad_filter_naming_it(measured, api_client_for):
    version, m = measured
    eng = api_client_for("eng", "engineer")
    url = f"/api/judge-versions/{version.pk}/disagreements/"
    first = eng.get(url, {"criterion": "faithfulness", "limit": 3}).json()
    assert (first["criterion"], first["count"], first["offset"], first["next_offset"], first["run"]) == (
        "faithfulness",
        9,
        0,
        3,
        m.run_id,
    )
    rest = eng.get(url, {"criterion": "faithfulness", "limit": 10, "offset": 3}).json()
    rows = first["disagreements"] + rest["disagreements"]
    assert rest["next_offset"] is None
    assert sorted((r["qid"], r["human"], r["judge"], r["distance"]) for r in rows) == [
        (f"q-{i:04d}", human_faith(i), judge_faith(i), 1) for i in FAITH
    ]
    assert {r["run_id"] for r in rows} == {"run-a"} and all(r["question"] for r in rows)
    verdicts = eng.get(url).json()
    assert (verdicts["criterion"], verdicts["count"]) == (None, disagreement_ids(m).count())
    for query, field in (
        ({"criterion": "fluency"}, "criterion"),
        ({"criterion": "tone", "direction": "judge_passes"}, "direction"),
        ({"limit": 0}, "limit"),
    ):
        refused = eng.get(url, query)
        assert refused.status_code == 400, query
        assert [p["field"] for p in refused.json()["problems"]] == [field]
    assert "faithfulness, tone" in json.dumps(eng.get(url, {"criterion": "fluency"}).json())
    assert api_client_for("adj", "adjudicator").get(url).status_code == 403
    assert eng.get("/api/judge-versions/999999/disagreements/").status_code == 404


@pytest.mark.django_db
def test_the_version_page_filters_by_criterion_and_shows_the_distance(measured, client, make_user, monkeypatch):
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", 4)
    version, _m = measured
    client.force_login(make_user("eng", "engineer"))
    page = client.get(f"/judges/versions/{version.pk}/?criterion=faithfulness").content.decode()
    assert "Disagreements on faithfulness (9)" in page
    assert page.count('data-testid="distance">1<') == 4
    assert "page 1 of 3" in page and "criterion=faithfulness&amp;page=2" in page
    tone = client.get(f"/judges/versions/{version.pk}/?criterion=tone").content.decode()
    assert "Disagreements on tone (12)" in tone and 'data-testid="distance"' not in tone
    bad = client.get(f"/judges/versions/{version.pk}/?criterion=fluency").content.decode()
    assert "does not score &#x27;fluency&#x27; (its criteria: faithfulness, tone)" in bad
    assert "Disagreements on fluency (0)" in bad


@pytest.mark.django_db
@pytest.mark.parametrize("size", [20, 60])
@pytest.mark.parametrize(
    ("url", "bound"),
    [
        ("/judges/versions/{pk}/?criterion=faithfulness", 28),  # the gate's criterion staleness: one more
        ("/api/judge-versions/{pk}/disagreements/?criterion=faithfulness&limit=2", 12),
    ],
)
def test_a_criterion_list_costs_the_same_statements_at_any_sample_size(
    size, url, bound, rated, tmp_path, run_inline, client, make_user, fetch_within, monkeypatch
):
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", 2)
    version = replay_version("external", "faithfulness=0.5", "tone")
    code, _out, err = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())), "--judge-version", str(version.pk)
    )
    assert code == 0, err
    run_inline(version, size=size)
    client.force_login(make_user("eng", "engineer"))
    fetch_within(url.format(pk=version.pk), bound)
