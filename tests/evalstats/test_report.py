"""The full agreement report and its JSONL reader."""

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats import (
    agreement_from_counts,
    agreement_report,
    agreement_report_from_rows,
    bootstrap_kappa_ci,
    parse_agreement_lines,
    stratified_bootstrap_kappa_ci,
)
from evalstats.report import rater_rows
from evalstats.strata import strata_tables

KEYS = {
    "n",
    "labels",
    "raw_agreement",
    "chance_agreement",
    "kappa",
    "kappa_se",
    "kappa_ci95",
    "bootstrap_ci95",
    "pabak",
    "ac1",
    "confusion",
    "per_stratum",
    "warnings",
}


def columns(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["correct", "incorrect"], n, p=[0.75, 0.25])
    b = np.where(rng.random(n) < 0.88, a, rng.choice(["correct", "incorrect"], n))
    s = rng.choice(["policy_lookup", "how_to"], n, p=[0.8, 0.2])
    return [f"q-{i:04d}" for i in range(n)], a, b, s


def test_report_without_strata():
    ids, a, b, _ = columns()
    rep = agreement_report(ids, a, b, iters=2_000, seed=3)
    assert rep.keys() >= KEYS
    labels = ["correct", "incorrect"]
    counts = np.array([[rep["confusion"][f"{x}/{y}"] for y in labels] for x in labels])
    assert rep["kappa"] == cohen_kappa_score(a, b)
    assert rep["bootstrap_ci95"] == bootstrap_kappa_ci(counts, iters=2_000, seed=3).as_list()
    assert rep["per_stratum"] == {}
    assert rep["bootstrap"] == {
        "method": "counts",
        "iters": 2_000,
        "seed": 3,
        "undefined_share": 0.0,
    }
    assert rep == agreement_report(ids, a, b, iters=2_000, seed=3)
    json.dumps(rep, allow_nan=False)


def test_descriptive_strata_keep_the_plain_bootstrap():
    ids, a, b, s = columns()
    rep = agreement_report(ids, a, b, s, iters=2_000, seed=3)
    labels = ["correct", "incorrect"]
    counts = np.array([[rep["confusion"][f"{x}/{y}"] for y in labels] for x in labels])
    assert rep["bootstrap_ci95"] == bootstrap_kappa_ci(counts, iters=2_000, seed=3).as_list()
    assert (rep["bootstrap_method"], rep["bootstrap"]["method"]) == ("plain", "counts")
    assert set(rep["per_stratum"]) == {"how_to", "policy_lookup"}
    assert agreement_report(ids, a, b, iters=2_000, seed=3)["bootstrap_method"] == "plain"
    with pytest.raises(ValueError, match="a stratified bootstrap needs strata"):
        agreement_report(ids, a, b, iters=2_000, stratified=True)


def test_report_with_strata_drawn_by_design_resamples_within_them():
    ids, a, b, s = columns()
    rep = agreement_report(ids, a, b, s, iters=2_000, seed=0, stratified=True)
    _, tables = strata_tables(a, b, s)
    expected = stratified_bootstrap_kappa_ci(tables, None, iters=2_000, seed=0)
    assert rep["bootstrap_ci95"] == expected.as_list()
    assert (rep["bootstrap_method"], rep["bootstrap"]["method"]) == ("stratified", "stratified counts")
    assert set(rep["per_stratum"]) == {"how_to", "policy_lookup"}
    for name, entry in rep["per_stratum"].items():
        mask = s == name
        assert entry["n"] == int(mask.sum())
        assert entry["kappa"] == cohen_kappa_score(a[mask], b[mask])
        assert entry["too_small"] is False
        assert {"n", "raw_agreement", "kappa"} <= entry.keys()


def test_report_weighted():
    ids = [str(i) for i in range(8)]
    a = [1, 2, 3, 2, 1, 3, 2, 2]
    b = [1, 3, 3, 2, 2, 3, 1, 2]
    rep = agreement_report(ids, a, b, weights="quadratic", iters=500)
    assert rep["kappa"] == cohen_kappa_score(a, b, weights="quadratic")
    assert rep["weights"] == "quadratic"
    assert rep["labels"] == [1, 2, 3]


def test_report_weighted_strings_take_the_given_order_and_refuse_without():
    ids = [str(i) for i in range(6)]
    a = ["low", "mid", "high", "mid", "low", "high"]
    b = ["mid", "mid", "high", "low", "low", "mid"]
    order = ["low", "mid", "high"]
    rep = agreement_report(ids, a, b, labels=order, weights="linear", iters=200)
    assert rep["labels"] == order
    assert rep["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=order, weights="linear"), abs=1e-12)
    with pytest.raises(ValueError, match="needs the order of the labels"):
        agreement_report(ids, a, b, weights="linear", iters=200)
    with pytest.raises(ValueError, match="labels \\['mid'\\] are not in the given labels \\['low', 'high'\\]"):
        agreement_report(ids, a, b, labels=["low", "high"], iters=200)


def test_report_with_zero_iters_skips_the_bootstrap():
    a = ["x", "y", "x", "y", "x"]
    b = ["x", "y", "y", "y", "x"]
    for strata in (None, ["s", "s", "t", "t", "t"]):
        rep = agreement_report([str(i) for i in range(5)], a, b, strata, iters=0)
        assert rep["kappa"] == cohen_kappa_score(a, b)
        assert rep["bootstrap_ci95"] is None
        assert rep["bootstrap"]["iters"] == 0


def test_report_of_one_label_is_null_with_reason_and_no_interval():
    rep = agreement_report(["1", "2"], ["correct", "correct"], ["correct", "correct"])
    assert rep["kappa"] is None
    assert rep["reason"]
    assert rep["bootstrap_ci95"] is None
    json.dumps(rep, allow_nan=False)


def test_report_refuses_duplicate_ids():
    with pytest.raises(ValueError, match="distinct"):
        agreement_report(["1", "1"], ["x", "y"], ["x", "y"])


# --- JSONL --------------------------------------------------------------------------------------


def test_parse_good_lines():
    lines = [
        '{"id": "q1", "a": "correct", "b": "incorrect", "stratum": "policy_lookup"}\n',
        "\n",
        '{"id": 2, "a": "correct", "b": "correct"}\n',
    ]
    rows, errors = parse_agreement_lines(lines)
    assert errors == []
    assert rows == [
        {"id": "q1", "a": "correct", "b": "incorrect", "stratum": "policy_lookup", "line": 1},
        {"id": "2", "a": "correct", "b": "correct", "stratum": None, "line": 3},
    ]


def test_parse_numeric_labels_and_refuse_other_values():
    lines = [
        '{"id": "q1", "a": 1, "b": 2.5}',
        '{"id": "q2", "a": true, "b": 3}',
        '{"id": "q3", "a": [1], "b": 3}',
    ]
    rows, errors = parse_agreement_lines(lines)
    assert rows == [{"id": "q1", "a": 1, "b": 2.5, "stratum": None, "line": 1}]
    assert [str(e) for e in errors] == [
        "line 2: field 'a' must be a label (a string or a number), got bool",
        "line 3: field 'a' must be a label (a string or a number), got list",
    ]


def test_parse_reports_every_error_with_its_line_and_field():
    lines = [
        '{"id": "q1", "a": "correct", "b": "correct"}',
        "{not json",
        '{"a": "correct", "b": "correct"}',
        '{"id": "q1", "a": "correct", "b": "correct"}',
        '{"id": "q4", "a": 1, "b": "correct"}',
        '{"id": "q5", "a": "correct"}',
        "[1, 2]",
        '{"id": "q7", "a": "x", "b": "y", "stratum": 3}',
    ]
    rows, errors = parse_agreement_lines(lines)
    assert [r["id"] for r in rows] == ["q1"]
    assert [str(e) for e in errors] == [
        "line 2: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        "line 3: field 'id' is missing",
        "line 4: field 'id' repeats 'q1' (first on line 1)",
        "line 5: field 'a' is a number label but line 1 has string labels; "
        "a file's labels must all be strings or all numbers",
        "line 6: field 'b' is missing",
        "line 7: expected a JSON object, got list",
        "line 8: field 'stratum' must be a string, got int",
    ]
    assert [(e.line, e.field) for e in errors] == [
        (2, None),
        (3, "id"),
        (4, "id"),
        (5, "a"),
        (6, "b"),
        (7, None),
        (8, "stratum"),
    ]


def test_report_from_rows_groups_rows_without_stratum():
    rows = [
        {"id": "1", "a": "x", "b": "x", "stratum": "s"},
        {"id": "2", "a": "y", "b": "y", "stratum": None},
        {"id": "3", "a": "y", "b": "x", "stratum": "s"},
    ]
    rep = agreement_report_from_rows(rows, iters=100)
    assert set(rep["per_stratum"]) == {"(none)", "s"}
    rep = agreement_report_from_rows([dict(r, stratum=None) for r in rows], iters=100)
    assert rep["per_stratum"] == {}
    assert rep["kappa"] == agreement_from_counts([[1, 0], [1, 1]], ["x", "y"]).kappa


def test_rater_rows_keep_ids_and_raters_as_strings_and_name_every_fault():
    records = [
        (1, {"id": 7, "rater": "ann", "label": 3}),
        (2, {"id": "7", "rater": "bob", "label": 2.5}),
        (3, {"id": 7, "rater": "ann", "label": 1}),
        (4, {"id": "8", "rater": True, "label": 1}),
        (5, {"id": "9", "rater": "ann", "label": "high"}),
        (6, "not an object"),
    ]
    rows, errors = rater_rows(records)
    assert rows == [
        {"id": "7", "rater": "ann", "label": 3, "line": 1},
        {"id": "7", "rater": "bob", "label": 2.5, "line": 2},
    ]
    assert [str(e) for e in errors] == [
        "line 3: field 'rater' 'ann' already rated item '7' (line 1); one rating per rater and item",
        "line 4: field 'rater' must be a string, got bool",
        "line 5: field 'label' is a string label but line 1 has number labels; "
        "a file's labels must all be strings or all numbers",
        "line 6: expected a JSON object, got str",
    ]


def test_report_carries_the_coverage_warning_among_its_warnings():
    ids = [f"q{i}" for i in range(30)]
    a = ["correct"] * 27 + ["incorrect"] * 3
    b = ["correct"] * 26 + ["incorrect"] + ["incorrect", "incorrect", "correct"]
    rep = agreement_report(ids, a, b, iters=2_000, seed=0)
    assert rep["confusion"] == {
        "correct/correct": 26,
        "correct/incorrect": 1,
        "incorrect/correct": 1,
        "incorrect/incorrect": 2,
    }
    assert rep["coverage_warning"].startswith(
        "only about 3 item(s) off the most common label 'correct', which has 90% of the labels"
    )
    assert rep["coverage_warning"] in rep["warnings"]


def test_report_warns_when_undefined_replicates_pass_two_percent():
    ids = [f"q{i}" for i in range(32)]
    a = ["correct"] * 31 + ["incorrect"]
    b = ["correct"] * 30 + ["incorrect", "incorrect"]
    rep = agreement_report(ids, a, b, iters=10_000, seed=0)
    share = rep["bootstrap"]["undefined_share"]
    assert share == bootstrap_kappa_ci([[30, 1], [0, 1]], iters=10_000, seed=0).undefined_share
    assert share > 0.02
    assert f"{round(share * 10_000)} of 10000 bootstrap replicates" in rep["warnings"][-2]


def test_report_of_one_item_has_no_kappa_and_no_interval():
    rep = agreement_report(["q1"], ["correct"], ["incorrect"], iters=1_000)
    assert rep["kappa"] is None
    assert rep["kappa_ci95"] is None
    assert rep["bootstrap_ci95"] is None
    assert rep["reason"].startswith("only one item")
