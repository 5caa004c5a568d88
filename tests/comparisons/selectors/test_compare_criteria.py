"""compare on a dataset's criteria: the paired mean difference of the final human values on an ordinal
scale, with its bootstrap interval, and the pass rule's paired comparison beside it."""

import numpy as np
import pytest

from annotation.services.criteria import criterion_set
from comparisons.selectors.compare import compare_runs
from evalstats.paired_scores import paired_mean_diff
from tests.comparisons.support import build_300, build_rated_criteria, criterion_values_file, run_command
from tests.conftest import run_cmd

pytestmark = pytest.mark.django_db


def test_an_ordinal_criterion_is_compared_on_the_per_question_difference(tmp_path):
    a_scores, b_scores = build_rated_criteria(tmp_path)
    out = compare_runs(run_a="A", run_b="B", iters=2000, seed=4)
    assert set(out["criteria"]) == {"faithfulness", "tone"}  # a categorical one with no pass rule has no score
    f = out["criteria"]["faithfulness"]
    ids = sorted(a_scores)
    expected = paired_mean_diff([a_scores[q] for q in ids], [b_scores[q] for q in ids], iters=2000, seed=4)
    assert (f["n"], f["kind"], f["version"], f["scale"]) == (39, "ordinal", 1, "values")
    assert f["mean_a"] == pytest.approx(np.mean([a_scores[q] for q in ids]))
    assert f["mean_b"] == pytest.approx(np.mean([b_scores[q] for q in ids]))
    assert f["diff"] == pytest.approx(f["mean_b"] - f["mean_a"])
    assert expected.ci95 is not None
    assert f["ci95"] == list(expected.ci95)
    # Every fifth question (7 of the 39 left) worsens; of the rest, those at 5 already tie.
    assert (f["worsened"], f["improved"] + f["tied"]) == (7, 32)
    assert f["tied"] == sum(1 for q in ids if a_scores[q] == b_scores[q])
    # The pass rule's reading: A passes where 4 or 5, B likewise; regressions are A-pass, B-fail.
    rule = f["pass_rule"]
    a_pass = {q for q in ids if a_scores[q] >= 4}
    b_pass = {q for q in ids if b_scores[q] >= 4}
    assert (rule["rule"], rule["n"]) == (">= 4", 39)
    assert rule["a_score"] == pytest.approx(len(a_pass) / 39)
    assert rule["b_score"] == pytest.approx(len(b_pass) / 39)
    assert rule["regressions"] == sorted(a_pass - b_pass)
    # poor/fair/good are no numbers: scored by position, B better by one step on q-0001..q-0009.
    tone = out["criteria"]["tone"]
    assert (tone["scale"], tone["n"], tone["mean_a"], tone["improved"], tone["worsened"]) == (
        "positions",
        40,
        2.0,
        10,
        0,
    )
    assert tone["diff"] == pytest.approx(10 / 40)
    assert tone["ci95"][0] > 0


def test_the_command_and_the_api_carry_the_criteria_and_a_set_without_them_is_unchanged(tmp_path, api_client_for):
    build_300(tmp_path, repeats=False)
    plain = run_command("compare", "A", "B")
    assert "criteria" not in plain
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"))
    # Defined but no value given yet: compared on no question, with the reason.
    empty = run_command("compare", "A", "B")["criteria"]["faithfulness"]
    assert (empty["n"], empty["diff"], empty["ci95"]) == (0, None, None)
    assert empty["reason"] == "no question scored by both runs"
    run_command(
        "import_labels",
        criterion_values_file(
            tmp_path,
            [
                ("A", "q-0001", "ann1", "faithfulness", "3"),
                ("B", "q-0001", "ann1", "faithfulness", "4"),
                ("A", "q-0002", "ann1", "faithfulness", "2"),
                ("B", "q-0002", "ann1", "faithfulness", "4"),
            ],
        ),
    )
    body = run_command("compare", "A", "B")
    assert {k: v for k, v in plain.items()} == {k: v for k, v in body.items() if k != "criteria"}
    f = body["criteria"]["faithfulness"]
    assert (f["n"], f["mean_a"], f["mean_b"], f["diff"], f["improved"]) == (2, 2.5, 4.0, 1.5, 2)
    assert f["ci95"] == [1.0, 2.0]
    code, text, _err = run_cmd("compare", "A", "B")
    assert code == 0
    assert "  criterion faithfulness: A 2.50  B 4.00  diff +1.50 [+1.00, +2.00] on n=2 (+2/-0)" in text.splitlines()
    api = api_client_for("eng", "engineer").get("/api/compare/", {"a": "A", "b": "B"})
    assert api.status_code == 200
    assert api.json()["criteria"] == body["criteria"]


def test_failures_and_series_follow_a_criterions_pass_rule(tmp_path, api_client_for, django_assert_max_num_queries):
    a_scores, b_scores = build_rated_criteria(tmp_path)
    # A's q-0000 has one value, 2 (only B's is disputed): it fails too.
    failing_a = sorted({"q-0000"} | {q for q, v in a_scores.items() if v < 4})
    out = run_command("failures", "A", "--criterion", "faithfulness")
    assert out["criterion"] == "faithfulness"
    assert [f["qid"] for f in out["failures"]] == failing_a
    assert (out["failing"], out["scored"], out["answered"]) == (len(failing_a), 40, 300)
    # q-0000's values disagree on B, none of B's others past q-0039 have one.
    b = run_command("failures", "B", "--criterion", "faithfulness")
    assert b["ungraded"] == {"no value on faithfulness": 260, "values on faithfulness disagree": 1}
    assert b["disputed_left_out"]["n"] == 1
    # Without a pass rule, nothing fails: refused, naming the fix; an unknown criterion is not found.
    refused = run_command("failures", "A", "--criterion", "tone", expect=2)
    assert refused["problems"][0]["field"] == "criterion"
    api = api_client_for("eng", "engineer")
    res = api.get("/api/runs/A/failures/", {"criterion": "nope"})
    assert (res.status_code, res.json()["error"]) == (404, "run 'A''s dataset has no criterion 'nope'")
    assert api.get("/api/runs/A/failures/", {"criterion": "faithfulness"}).json() == out

    # The series: each point the share passing (A on its 40 rated answers; B on its 39 final ones).
    with django_assert_max_num_queries(12):
        line = run_command("series", "--dataset", "support", "--criterion", "faithfulness")
    assert line["criterion"] == "faithfulness"
    points = {p["run_id"]: (p["score"], p["n"]) for ln in line["lines"] for s in ln["segments"] for p in s["points"]}
    assert points["A"] == (pytest.approx(sum(1 for v in a_scores.values() if v >= 4) / 40), 40)
    assert points["B"] == (pytest.approx(sum(1 for v in b_scores.values() if v >= 4) / 39), 39)
    assert api.get("/api/series/", {"dataset": "support", "criterion": "faithfulness"}).json() == line
    both = run_command("series", "--dataset", "support", "--criterion", "faithfulness", "--backfill", expect=2)
    assert both["problems"][0]["field"] == "backfill"
