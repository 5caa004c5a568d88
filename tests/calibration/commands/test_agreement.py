"""`manage.py agreement FILE`: the INTERFACES object on stdout, bad input exit 2 by line number."""

import json

import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from evalstats import agreement_report, bootstrap_kappa_ci


def write(path, lines):
    path.write_text("".join(lines), encoding="utf-8")
    return path


def rows_file(tmp_path, *, strata=True):
    # 20 both correct, 3 a-correct/b-incorrect, 2 a-incorrect/b-correct, 5 both incorrect.
    pairs = [("correct", "correct")] * 20 + [("correct", "incorrect")] * 3
    pairs += [("incorrect", "correct")] * 2 + [("incorrect", "incorrect")] * 5
    lines = []
    for i, (a, b) in enumerate(pairs):
        row = {"id": f"q-{i:03d}", "a": a, "b": b}
        if strata:
            row["stratum"] = "policy_lookup" if i % 3 else "no_answer"
        lines.append(json.dumps(row) + "\n")
    return write(tmp_path / "labels.jsonl", lines), pairs


def run(capsys, *args):
    code = 0
    try:
        call_command("agreement", *args)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_is_the_agreement_object(tmp_path, capsys):
    path, pairs = rows_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--json", "--iters", "2000", "--seed", "3")
    assert code == 0
    payload = json.loads(out)
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    assert payload["n"] == 30
    assert payload["labels"] == ["correct", "incorrect"]
    assert payload["kappa"] == cohen_kappa_score(a, b)
    assert payload["confusion"] == {
        "correct/correct": 20,
        "correct/incorrect": 3,
        "incorrect/correct": 2,
        "incorrect/incorrect": 5,
    }
    assert set(payload["per_stratum"]) == {"no_answer", "policy_lookup"}
    assert payload["per_stratum"]["no_answer"]["n"] == 10
    strata = ["policy_lookup" if i % 3 else "no_answer" for i in range(30)]
    expected = agreement_report([f"q-{i:03d}" for i in range(30)], a, b, strata, iters=2000, seed=3)
    assert payload == json.loads(json.dumps(expected))
    for key in (
        "raw_agreement",
        "chance_agreement",
        "kappa_se",
        "kappa_ci95",
        "bootstrap_ci95",
        "pabak",
        "ac1",
        "warnings",
    ):
        assert key in payload


def test_weights_option(tmp_path, capsys):
    lines = [
        json.dumps({"id": str(i), "a": a, "b": b}) + "\n"
        for i, (a, b) in enumerate([(1, 1), (2, 3), (3, 3), (1, 2), (2, 2)])
    ]
    path = write(tmp_path / "ordinal.jsonl", lines)
    code, out, _ = run(capsys, str(path), "--json", "--weights", "quadratic", "--iters", "200")
    assert code == 0
    payload = json.loads(out)
    assert payload["kappa"] == cohen_kappa_score([1, 2, 3, 1, 2], [1, 3, 3, 2, 2], weights="quadratic")
    assert payload["labels"] == [1, 2, 3]
    assert payload["per_stratum"] == {}


def scale_file(tmp_path, a, b, name="scale.jsonl"):
    lines = [json.dumps({"id": f"q{i}", "a": x, "b": y}) + "\n" for i, (x, y) in enumerate(zip(a, b, strict=True))]
    return write(tmp_path / name, lines)


# Ten raters' worth of a 1-10 scale: b is a, or one step off, or further now and then.
SCALE_A = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 3, 5, 7, 2, 9, 10, 1, 6, 4, 8, 5, 5, 2, 7]
SCALE_B = [2, 2, 3, 5, 5, 7, 7, 8, 10, 9, 2, 5, 6, 2, 9, 10, 3, 6, 4, 7, 5, 8, 1, 7]


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_numeric_labels_weigh_in_numeric_order(tmp_path, capsys, weights):
    path = scale_file(tmp_path, SCALE_A, SCALE_B)
    code, out, _ = run(capsys, str(path), "--json", "--weights", weights, "--iters", "200")
    assert code == 0
    payload = json.loads(out)
    assert payload["labels"] == list(range(1, 11))
    expected = cohen_kappa_score(SCALE_A, SCALE_B, labels=list(range(1, 11)), weights=weights)
    assert payload["kappa"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_labels_option_sets_the_order_of_string_labels(tmp_path, capsys, weights):
    a = [str(x) for x in SCALE_A]
    b = [str(x) for x in SCALE_B]
    path = scale_file(tmp_path, a, b)
    order = [str(i) for i in range(1, 11)]
    code, out, _ = run(capsys, str(path), "--json", "--weights", weights, "--labels", ",".join(order), "--iters", "200")
    assert code == 0
    payload = json.loads(out)
    assert payload["labels"] == order
    expected = cohen_kappa_score(a, b, labels=order, weights=weights)
    assert payload["kappa"] == pytest.approx(expected, abs=1e-12)
    assert abs(cohen_kappa_score(a, b, weights=weights) - expected) > 0.01


def test_labels_option_on_numeric_labels_reads_numbers(tmp_path, capsys):
    path = scale_file(tmp_path, SCALE_A, SCALE_B)
    # Reversed order: linear weights depend only on distance, so kappa is the same; labels follow the order.
    code, out, _ = run(
        capsys, str(path), "--json", "--weights", "linear", "--labels", "10,9,8,7,6,5,4,3,2,1", "--iters", "200"
    )
    assert code == 0
    payload = json.loads(out)
    assert payload["labels"] == list(range(10, 0, -1))
    expected = cohen_kappa_score(SCALE_A, SCALE_B, labels=list(range(10, 0, -1)), weights="linear")
    assert payload["kappa"] == pytest.approx(expected, abs=1e-12)


def test_weighting_unordered_strings_exits_2_with_a_sentence(tmp_path, capsys):
    path = scale_file(tmp_path, ["low", "medium", "high"], ["low", "high", "high"])
    code, out, err = run(capsys, str(path), "--weights", "linear")
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert "linear-weighted kappa needs the order of the labels, and string labels (high, low, medium) have none" in err
    assert "--labels L1,L2,…" in err


def test_label_outside_labels_option_exits_2_naming_label_and_line(tmp_path, capsys):
    path = scale_file(tmp_path, ["low", "medium", "high"], ["low", "hihg", "high"])
    code, out, err = run(capsys, str(path), "--json", "--weights", "linear", "--labels", "low,medium,high")
    assert code == 2
    assert json.loads(out) == {
        "error": f"{path}: 1 label(s) not in --labels; nothing was measured",
        "problems": [{"line": 2, "field": "b", "message": "label 'hihg' is not in --labels (low, medium, high)"}],
    }
    assert "line 2, field 'b': label 'hihg' is not in --labels (low, medium, high)" in err


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("low,,high", "--labels has an empty label"),
        ("low,low,medium,high", "--labels names 'low' twice"),
    ],
)
def test_malformed_labels_option_exits_2(tmp_path, capsys, labels, message):
    path = scale_file(tmp_path, ["low", "medium", "high"], ["low", "high", "high"])
    code, out, err = run(capsys, str(path), "--labels", labels)
    assert code == 2
    assert out == ""
    assert message in err


def test_labels_option_must_be_numbers_for_numeric_labels(tmp_path, capsys):
    path = scale_file(tmp_path, [1, 2, 3], [1, 3, 3])
    code, _out, err = run(capsys, str(path), "--labels", "1,two,3")
    assert code == 2
    assert "--labels gives 'two', which is not a number, but the file's labels are numbers" in err


def test_text_summary_goes_to_stdout(tmp_path, capsys):
    path, _ = rows_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--iters", "500")
    assert code == 0
    assert out.startswith("30 items, labels: correct, incorrect\n")
    assert "raw agreement 83.3%" in out
    assert "no_answer" in out and "too small to conclude" in out


def test_undefined_kappa_is_null_with_reason(tmp_path, capsys):
    lines = [json.dumps({"id": str(i), "a": "correct", "b": "correct"}) + "\n" for i in range(5)]
    path = write(tmp_path / "one.jsonl", lines)
    code, out, _ = run(capsys, str(path), "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["kappa"] is None
    assert "only one label" in payload["reason"]
    assert payload["bootstrap_ci95"] is None


def test_bad_input_exits_2_with_every_error_by_line(tmp_path, capsys):
    path = write(
        tmp_path / "bad.jsonl",
        [
            '{"id": "q1", "a": "correct", "b": "correct"}\n',
            "{not json\n",
            '{"id": "q1", "a": "correct", "b": "correct"}\n',
            '{"id": "q4", "a": 1}\n',
        ],
    )
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert "line 2: malformed JSON" in err
    assert "line 3, field 'id': repeats 'q1' (first on line 1)" in err
    assert (
        "line 4, field 'a': is a number label but line 1 has string labels; "
        "a file's labels must all be strings or all numbers" in err
    )
    assert "line 4, field 'b': is missing" in err


def test_missing_file_exits_2(tmp_path, capsys):
    code, _out, err = run(capsys, str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert "no such file" in err


def test_bad_iters_exits_2(tmp_path, capsys):
    path, _ = rows_file(tmp_path)
    code, _, err = run(capsys, str(path), "--iters", "0")
    assert code == 2
    assert "--iters" in err


def test_unknown_weights_is_refused(tmp_path):
    path, _ = rows_file(tmp_path)
    # From a shell argparse exits 2; through call_command it is a CommandError.
    with pytest.raises(CommandError, match="invalid choice: 'cubic'"):
        call_command("agreement", str(path), "--weights", "cubic")


# --- --raters: any number of raters ---------------------------------------------------------------

# Hayes & Krippendorff (2007), four coders x 12 units with gaps (ordinal alpha 0.815).
HAYES = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def raters_file(tmp_path, data=HAYES, name="raters.jsonl", label=lambda v: v):
    lines = [
        json.dumps({"id": f"u{i}", "rater": f"coder{r}", "label": label(v)}) + "\n"
        for i in range(len(data[0]))
        for r, row in enumerate(data)
        if (v := row[i]) is not None
    ]
    return write(tmp_path / name, lines)


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_raters_json_is_the_interface_object(tmp_path, capsys, metric):
    import krippendorff
    import numpy as np

    path = raters_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--raters", "--metric", metric, "--json", "--iters", "300", "--seed", "2")
    assert code == 0
    payload = json.loads(out)
    data = np.array([[np.nan if v is None else v for v in row] for row in HAYES], dtype=float)
    assert payload["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement=metric), abs=1e-12
    )
    assert {"n_items", "raters", "fleiss_kappa", "krippendorff_alpha", "alpha_ci95", "metric", "warnings"} <= set(
        payload
    )
    assert payload["n_items"] == 11
    assert payload["raters"] == 4
    assert payload["metric"] == metric
    assert payload["labels"] == [1, 2, 3, 4, 5]
    assert payload["warnings"][0] == (
        "1 item(s) had fewer than 2 ratings and were dropped: agreement needs two raters on an item"
    )
    lo, hi = payload["alpha_ci95"]
    assert lo < payload["krippendorff_alpha"] < hi
    assert payload["bootstrap"] == {"method": "items", "iters": 300, "seed": 2, "undefined_share": 0.0}


def test_raters_default_metric_is_nominal_and_text_output(tmp_path, capsys):
    path = raters_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--raters", "--iters", "200")
    assert code == 0
    assert out.startswith("11 items rated by two or more of 4 raters, 40 ratings, labels: 1, 2, 3, 4, 5\n")
    assert "Krippendorff's alpha (nominal) 0.74" in out
    assert "(bootstrap over items, 200 draws, seed 0)" in out
    assert "WARNING: 1 item(s) had fewer than 2 ratings and were dropped" in out


def test_raters_string_labels_need_labels_for_ordinal(tmp_path, capsys):
    names = ["very low", "low", "mid", "high", "very high"]
    path = raters_file(tmp_path, label=lambda v: names[v - 1])
    code, out, err = run(capsys, str(path), "--raters", "--metric", "ordinal")
    assert code == 2
    assert out == ""
    assert "ordinal alpha needs the order of the labels, and string labels (high, low, mid, very high, very low)" in err
    code, out, _ = run(capsys, str(path), "--raters", "--metric", "ordinal", "--labels", ",".join(names), "--json")
    assert code == 0
    assert round(json.loads(out)["krippendorff_alpha"], 3) == 0.815


def test_raters_bad_lines_exit_2_by_line_and_field(tmp_path, capsys):
    path = write(
        tmp_path / "bad.jsonl",
        [
            '{"id": "q1", "rater": "ann", "label": "yes"}\n',
            '{"id": "q1", "rater": "ann", "label": "no"}\n',
            '{"id": "q2", "label": "no"}\n',
            '{"id": "q3", "rater": "bob", "label": 3}\n',
            '{"id": "q4", "rater": "bob"}\n',
            '{"id": "q5", "rater": ["x"], "label": "no"}\n',
        ],
    )
    code, out, err = run(capsys, str(path), "--raters", "--json")
    assert code == 2
    assert json.loads(out) == {
        "error": f"{path}: 5 problem(s); nothing was measured",
        "problems": [
            {
                "line": 2,
                "field": "rater",
                "message": "'ann' already rated item 'q1' (line 1); one rating per rater and item",
            },
            {"line": 3, "field": "rater", "message": "is missing"},
            {
                "line": 4,
                "field": "label",
                "message": "is a number label but line 1 has string labels; "
                "a file's labels must all be strings or all numbers",
            },
            {"line": 5, "field": "label", "message": "is missing (leave the line out for a missing rating)"},
            {"line": 6, "field": "rater", "message": "must be a string, got list"},
        ],
    }
    assert "Traceback" not in err


def test_raters_label_outside_labels_option_exits_2(tmp_path, capsys):
    path = write(
        tmp_path / "r.jsonl",
        ['{"id": "q1", "rater": "ann", "label": "low"}\n', '{"id": "q1", "rater": "bob", "label": "hgh"}\n'],
    )
    code, _out, err = run(capsys, str(path), "--raters", "--labels", "low,high")
    assert code == 2
    assert "line 2, field 'label': label 'hgh' is not in --labels (low, high)" in err


def test_raters_refuses_weights_and_metric_without_raters(tmp_path, capsys):
    path = raters_file(tmp_path)
    code, _out, err = run(capsys, str(path), "--raters", "--weights", "linear")
    assert code == 2
    assert "--weights is for two raters; with --raters choose the distance with --metric" in err
    pairs, _ = rows_file(tmp_path)
    code, _out, err = run(capsys, str(pairs), "--metric", "ordinal")
    assert code == 2
    assert "--metric goes with --raters" in err


def skewed_file(tmp_path):
    # n = 30 at prevalence 0.9: 26 both correct, 1 each way, 2 both incorrect.
    pairs = [("correct", "correct")] * 26 + [("correct", "incorrect"), ("incorrect", "correct")]
    pairs += [("incorrect", "incorrect")] * 2
    lines = [json.dumps({"id": f"q-{i:03d}", "a": a, "b": b}) + "\n" for i, (a, b) in enumerate(pairs)]
    return write(tmp_path / "skewed.jsonl", lines)


def test_small_skewed_sample_warns_in_json_and_text(tmp_path, capsys):
    path = skewed_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--json", "--iters", "2000")
    assert code == 0
    payload = json.loads(out)
    warning = payload["coverage_warning"]
    assert warning.startswith(
        "only about 3 item(s) off the most common label 'correct', which has 90% of the labels (at least 10 are needed)"
    )
    assert warning.endswith("gate on the interval's lower bound (policy lower_bound) rather than on kappa itself.")
    assert warning in payload["warnings"]
    code, out, _ = run(capsys, str(path), "--iters", "2000")
    assert code == 0
    assert f"  WARNING: {warning}" in out.splitlines()


def test_balanced_sample_of_thirty_has_no_coverage_warning(tmp_path, capsys):
    pairs = [("correct", "correct")] * 12 + [("correct", "incorrect"), ("incorrect", "correct")] * 3
    pairs += [("incorrect", "incorrect")] * 12
    lines = [json.dumps({"id": f"q-{i:03d}", "a": a, "b": b}) + "\n" for i, (a, b) in enumerate(pairs)]
    code, out, _ = run(capsys, str(write(tmp_path / "even.jsonl", lines)), "--json", "--iters", "500")
    assert code == 0
    assert json.loads(out)["coverage_warning"] is None


def test_one_item_prints_undefined_never_zero_with_zero_interval(tmp_path, capsys):
    path = write(tmp_path / "one.jsonl", [json.dumps({"id": "q1", "a": "correct", "b": "incorrect"}) + "\n"])
    code, out, _ = run(capsys, str(path), "--json")
    assert code == 0
    payload = json.loads(out)
    assert (payload["kappa"], payload["kappa_ci95"], payload["bootstrap_ci95"]) == (None, None, None)
    assert payload["reason"].startswith("only one item: kappa needs at least two")
    assert payload["coverage_warning"].startswith("only 1 item(s) (at least 30 are needed)")
    code, out, _ = run(capsys, str(path))
    assert "  kappa: undefined (only one item: kappa needs at least two" in out
    assert "[0.000, 0.000]" not in out and "kappa 0.000" not in out


def test_labels_differing_by_case_are_warned_about(tmp_path, capsys):
    pairs = [("correct", "Correct")] * 3 + [("incorrect", "incorrect")] * 3 + [("correct", "correct")] * 3
    lines = [json.dumps({"id": str(i), "a": a, "b": b}) + "\n" for i, (a, b) in enumerate(pairs)]
    code, out, _ = run(capsys, str(write(tmp_path / "case.jsonl", lines)), "--json", "--iters", "200")
    assert code == 0
    assert (
        "labels that differ only by case or whitespace are counted as different labels: 'Correct', 'correct'. "
        "If they mean the same, write them the same way and measure again."
    ) in json.loads(out)["warnings"]


def test_strata_in_the_file_are_descriptive_so_the_bootstrap_is_plain(tmp_path, capsys):
    path, _ = rows_file(tmp_path)
    code, out, _ = run(capsys, str(path), "--json", "--iters", "2000", "--seed", "3")
    payload = json.loads(out)
    assert code == 0 and len(payload["per_stratum"]) == 2
    assert payload["bootstrap_method"] == "plain"
    assert payload["bootstrap_ci95"] == bootstrap_kappa_ci([[20, 3], [2, 5]], iters=2000, seed=3).as_list()
