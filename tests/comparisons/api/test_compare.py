"""The comparison API and the engineer pages: same objects as the commands, roles, bad input."""

import pytest

from tests.comparisons.support import build_300, build_judge_series, build_series, build_stratum_regression, run_command

pytestmark = pytest.mark.django_db


def test_compare_api_is_the_command_object(tmp_path, api_client_for):
    build_300(tmp_path)
    api = api_client_for("eng", "engineer")
    res = api.get("/api/compare/", {"a": "A", "b": "B"})
    assert res.status_code == 200
    assert res.json() == run_command("compare", "A", "B")
    body = res.json()
    assert (body["n"], body["diff_points"], body["b_only"], body["a_only"]) == (300, 8.0, 38, 14)
    assert body["verdict"]["status"] == "clears both bars"


def test_compare_api_roles_and_bad_input(tmp_path, api_client_for):
    build_300(tmp_path, repeats=False)
    assert api_client_for("adj", "adjudicator").get("/api/compare/", {"a": "A", "b": "B"}).status_code == 403
    assert api_client_for("ann", "annotator").get("/api/compare/", {"a": "A", "b": "B"}).status_code == 403
    assert api_client_for("exp", "expert").get("/api/compare/", {"a": "A", "b": "B"}).status_code == 403
    api = api_client_for("eng", "engineer")
    res = api.get("/api/compare/", {"a": "A"})
    assert (res.status_code, res.json()["error"]) == (400, "query parameter 'b' is required")
    res = api.get("/api/compare/", {"a": "A", "b": "B", "iters": "many"})
    assert (res.status_code, res.json()["problems"]) == (
        400,
        [{"line": None, "field": "iters", "message": "must be a whole number from 1 to 100000"}],
    )
    res = api.get("/api/compare/", {"a": "A", "b": "zzz"})
    assert (res.status_code, res.json()["error"]) == (404, "unknown run 'zzz'")
    res = api.get("/api/compare/", {"a": "A", "b": "A"})
    assert res.status_code == 400


def test_compare_question_opens_one_regression(tmp_path, api_client_for):
    _, a_only = build_300(tmp_path, repeats=False)
    api = api_client_for("eng", "engineer")
    res = api.get("/api/compare/question/", {"a": "A", "b": "B", "qid": a_only[0]})
    assert res.status_code == 200
    d = res.json()
    assert (d["qid"], d["question"], d["gold_chunk_id"]) == (
        a_only[0],
        f"question {a_only[0]}",
        f"doc:A#{int(a_only[0][2:]):04d}",
    )
    assert (d["a"]["graded"], d["b"]["graded"], d["a"]["graded_by"]) == (True, False, "harness")
    assert d["a"]["answer"] == f"answer of rag-v1 to {a_only[0]}"


def test_failures_series_history_planner_endpoints(tmp_path, api_client_for):
    build_series(tmp_path)
    api = api_client_for("eng", "engineer")
    res = api.get("/api/runs/r1/failures/")
    assert res.status_code == 200 and res.json() == run_command("failures", "r1")
    assert res.json()["failing"] == 5
    assert api.get("/api/runs/nope/failures/").status_code == 404
    res = api.get("/api/series/", {"dataset": "support", "system": "rag-v2", "backfill": "1"})
    assert res.status_code == 200
    assert res.json() == run_command("series", "--dataset", "support", "--system", "rag-v2", "--backfill")
    assert api.get("/api/series/").status_code == 400
    hist = api.get("/api/datasets/support/history/").json()
    assert [v["number"] for v in hist["versions"]] == [1, 2, 3]
    assert hist["versions"][1]["audit_url"] == "/api/datasets/support/audit/"
    (c,) = hist["versions"][2]["ceilings"]
    # r5, the latest on v3, was scored under another evaluator config: r4 is the run paired with r3.
    assert (c["old_run"], c["new_run"], c["ceiling"], c["new_score"], c["exceeds_ceiling"]) == (
        "r3",
        "r4",
        10 / 12,
        0.75,
        False,
    )

    res = api.get("/api/planner/", {"n": "300", "gap": "5", "discordant_rate": "0.1733"})
    p = res.json()
    assert res.status_code == 200
    assert (p["n"], p["gap_points"], p["discordant_rate"], p["discordant_rate_from"]) == (300, 5.0, 0.1733, "given")
    assert round(p["resolvable_gap_points"], 2) == 4.71 and p["n_needed"] == 267
    # 100 * (1.96 + 0.8416) * sqrt(0.1733 / 300): the gap found with 80% power.
    assert round(p["detectable_gap_80"], 2) == 6.73
    assert p["resolvable_gap_note"].startswith("The resolvable gap is the 95% interval's half-width")
    assert [round(r["detectable_gap_80"], 2) for r in p["table"][:2]] == [11.66, 8.25]
    p = api.get("/api/planner/", {"n": "300"}).json()
    assert (p["discordant_rate"], p["discordant_rate_from"]) == (0.15, "assumed default")
    res = api.get("/api/planner/", {"n": "-3", "gap": "0"})
    assert res.status_code == 400
    assert [x["field"] for x in res.json()["problems"]] == ["n", "gap"]


def test_planner_rate_from_a_comparison(tmp_path, api_client_for):
    build_300(tmp_path, repeats=False)
    p = api_client_for("eng", "engineer").get("/api/planner/", {"a": "A", "b": "B", "gap": "8"}).json()
    assert (p["discordant_rate"], p["discordant_rate_from"], p["n_needed"]) == (52 / 300, "runs A vs B", 105)


def test_pages_render_for_engineers_only(tmp_path, client, make_user):
    build_series(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    make_user("ann", "annotator", password="pw-annotator")
    client.login(username="ann", password="pw-annotator")
    assert client.get("/compare/").status_code == 403
    client.login(username="eng", password="pw-engineer")
    page = client.get("/compare/", {"a": "r4", "b": "r5"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="interval-chart"' in html and "naive 95%" in html and "paired 95%" in html
    assert "the set is too small to resolve it" in html
    series = client.get("/series/", {"dataset": "support"}).content.decode()
    assert series.count('class="series-break"') == 3
    assert "dataset v1 → v2: +0 added, −0 removed, ~1 modified (10 → 10 examples)" in series
    run = client.get("/runs/r1/").content.decode()
    assert 'data-testid="failure-chart"' in run and "gold chunk not retrieved" in run
    assert client.get("/runs/").status_code == 200
    assert "no relabel audit yet" in client.get("/datasets/support/history/").content.decode()
    assert client.get("/runs/nope/").status_code == 404
    assert client.get("/compare/", {"a": "r1", "b": "nope"}).status_code == 404
    frag = client.get("/compare/planner/", {"n": "400", "discordant_rate": "0.2"}).content.decode()
    assert 'data-testid="planner-gap">4.4 points' in frag


def test_compare_api_names_the_stratum_that_regressed(tmp_path, api_client_for):
    build_stratum_regression(tmp_path)
    res = api_client_for("eng", "engineer").get("/api/compare/", {"a": "A", "b": "B"})
    assert res.status_code == 200
    body = res.json()
    assert body == run_command("compare", "A", "B")
    assert body["stratum_regressions"] == ["no_answer"]
    assert body["warnings"][0].startswith("REGRESSION IN A STRATUM: no_answer -33.3 points [-50.0, -16.7]")
    assert body["per_stratum"]["no_answer"]["mcnemar_p"] == 2 * 0.5**10


def test_series_api_backfill_names_the_judge_questions_it_cannot_rescore(tmp_path, api_client_for):
    build_judge_series(tmp_path, calibrate=False)
    api = api_client_for("eng", "engineer")
    res = api.get("/api/series/", {"dataset": "support", "backfill": "1"})
    assert res.status_code == 200
    assert res.json() == run_command("series", "--dataset", "support", "--backfill")
    (bf,) = res.json()["lines"][0]["segments"][1]["backfilled"]
    assert (bf["rescored_by"], len(bf["not_rescored"])) == ([], 12)
    assert bf["not_rescored"][0] == {"qid": "q-0000", "reason": "no judge version passes its gate"}
