"""Known answers for agreement and kappa: published tables and the degenerate corners."""

import json
import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.inter_rater import cohens_kappa

from evalstats import agreement, agreement_from_counts, confusion_matrix
from evalstats.kappa import Z_975


def rows_from_table(table, labels):
    """Two label columns that produce `table` (rows rater a, columns rater b)."""
    a, b = [], []
    for i, la in enumerate(labels):
        for j, lb in enumerate(labels):
            a += [la] * int(table[i][j])
            b += [lb] * int(table[i][j])
    return a, b


# --- Wikipedia, "Cohen's kappa": worked examples ---------------------------------------------


def test_wikipedia_simple_example():
    # 50 grant proposals: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    ag = agreement_from_counts([[20, 5], [10, 15]], ["yes", "no"], positive="yes")
    assert ag.n == 50
    assert ag.raw_agreement == 0.7
    assert ag.chance_agreement == 0.5
    assert ag.kappa == pytest.approx(0.4, abs=1e-15)
    assert ag.pabak == 0.4
    assert ag.always_correct_agreement == 0.5
    assert ag.prevalence_index == 0.1  # (20 - 15) / 50
    assert ag.bias_index == -0.1  # (5 - 10) / 50


@pytest.mark.parametrize(
    "table, kappa",
    [
        # "Same percentages but different numbers": both 60% raw agreement.
        ([[45, 15], [25, 15]], 3 / 23),  # Wikipedia: 0.1304
        ([[25, 35], [5, 35]], 7 / 27),  # Wikipedia: 0.2593
    ],
)
def test_wikipedia_same_raw_agreement_different_kappa(table, kappa):
    ag = agreement_from_counts(table, ["yes", "no"])
    assert ag.raw_agreement == 0.6
    assert ag.kappa == pytest.approx(kappa, abs=1e-15)
    assert round(ag.kappa, 4) == round(kappa, 4)


# --- SAS PROC FREQ example in statsmodels' test-suite (test_inter_rater.py, table10) ---------

TABLE10 = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def test_sas_simple_kappa_with_published_se_and_interval():
    ag = agreement_from_counts(TABLE10, ["1", "2", "3"])
    # SAS: Kappa 0.4842, ASE 0.1380, 95% CI 0.2137 .. 0.7547, ASE under H0 0.1484.
    assert round(ag.kappa, 4) == 0.4842
    assert round(ag.kappa_se, 4) == 0.1380
    assert [round(x, 4) for x in ag.kappa_ci95] == [0.2137, 0.7547]
    assert round(ag.kappa_se0, 4) == 0.1484


def test_sas_weighted_kappa_with_published_se_and_interval():
    ag = agreement_from_counts(TABLE10, ["1", "2", "3"], weights="linear")
    # SAS: Weighted Kappa 0.4701, ASE 0.1457, 95% CI 0.1845 .. 0.7558, ASE under H0 0.1426.
    assert round(ag.kappa, 4) == 0.4701
    assert round(ag.kappa_se, 4) == 0.1457
    assert [round(x, 4) for x in ag.kappa_ci95] == [0.1845, 0.7558]
    assert round(ag.kappa_se0, 4) == 0.1426


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_sas_table_equals_statsmodels_and_sklearn_exactly(weights):
    labels = ["1", "2", "3"]
    ag = agreement_from_counts(TABLE10, labels, weights=weights)
    res = cohens_kappa(np.array(TABLE10), wt=weights)
    assert ag.kappa_se == res.std_kappa
    assert ag.kappa_se0 == res.std_kappa0
    assert ag.kappa_ci95 == (res.kappa_low, res.kappa_upp)
    a, b = rows_from_table(TABLE10, labels)
    assert ag.kappa == cohen_kappa_score(a, b, weights=weights)


def test_z_constant_is_the_normal_quantile_statsmodels_uses():
    assert norm.isf(0.025) == Z_975


# --- The kappa paradox and the base-rate baseline --------------------------------------------


def test_kappa_paradox_high_raw_agreement_negative_kappa_warns():
    # 94 of 100 agree, but both raters say "correct" 97 times: chance agreement is 94.18%.
    ag = agreement_from_counts([[94, 3], [3, 0]], ["correct", "incorrect"], positive="correct")
    assert ag.raw_agreement == 0.94
    assert ag.chance_agreement == pytest.approx(0.9418, abs=1e-15)
    assert ag.kappa == pytest.approx((0.94 - 0.9418) / (1 - 0.9418), abs=1e-12)
    assert ag.kappa < 0
    assert ag.pabak == 0.88
    assert ag.always_correct_agreement == 0.97
    assert ag.warnings == (
        "raw agreement is 94.0% but kappa is only -0.03: label 'correct' makes up 97.0% of the "
        "labels, so two raters guessing with these base rates would already agree 94.2% of the "
        "time. The raw figure mostly reflects the base rate, not skill (the kappa paradox); read "
        "kappa beside PABAK (0.88) and AC1 (0.94).",
        "a rater that always says 'correct' would agree with a on 97.0% of items, at least as often as b does (94.0%).",
    )


def test_the_warnings_name_the_raters_they_are_given():
    ag = agreement_from_counts(
        [[20, 51], [0, 29]], ["correct", "incorrect"], positive="correct", raters=("the humans", "the judge")
    )

    assert ag.warnings == (
        "a rater that always says 'correct' would agree with the humans on 71.0% of items, at least as often as "
        "the judge does (49.0%).",
    )


def test_no_warning_when_kappa_and_raw_agree():
    ag = agreement_from_counts([[40, 5], [5, 50]], ["correct", "incorrect"])
    assert ag.warnings == ()


def test_gwet_ac1_hand_worked():
    # pi_correct = (97 + 97) / 200 = 0.97; pe = 2 * 0.97 * 0.03 / 1 = 0.0582.
    ag = agreement_from_counts([[94, 3], [3, 0]], ["correct", "incorrect"])
    assert ag.ac1 == pytest.approx((0.94 - 0.0582) / (1 - 0.0582), abs=1e-15)


def test_prevalence_and_bias_only_for_two_labels():
    ag = agreement_from_counts(TABLE10, ["1", "2", "3"])
    assert ag.prevalence_index is None
    assert ag.bias_index is None


def test_always_correct_none_when_positive_is_not_a_label():
    ag = agreement_from_counts([[1, 2], [3, 4]], ["yes", "no"], positive="correct")
    assert ag.always_correct_agreement is None


# --- Degenerate inputs: never a crash, never a NaN --------------------------------------------


def test_empty_input():
    ag = agreement([], [])
    assert ag.n == 0
    assert ag.labels == ()
    assert ag.kappa is None
    assert ag.raw_agreement is None
    assert ag.chance_agreement is None
    assert ag.kappa_se is None
    assert ag.kappa_ci95 is None
    assert ag.reason == "no items to compare; kappa is undefined"


def test_one_label_only_is_undefined_with_a_reason():
    ag = agreement(["correct"] * 12, ["correct"] * 12)
    assert ag.n == 12
    assert ag.raw_agreement == 1.0
    assert ag.chance_agreement == 1.0
    assert ag.kappa is None
    assert ag.reason == (
        "only one label ('correct') occurs in both raters' labels, so chance agreement is 1 and kappa is undefined"
    )
    with pytest.warns(Warning):
        assert np.isnan(cohen_kappa_score(["correct"] * 12, ["correct"] * 12))


def test_one_label_with_an_empty_declared_label_is_still_undefined():
    ag = agreement(["x"] * 5, ["x"] * 5, labels=["x", "y"])
    assert ag.confusion == ((5, 0), (0, 0))
    assert ag.kappa is None
    assert "only one label ('x')" in ag.reason


def test_total_disagreement_is_minus_one():
    ag = agreement(["x", "y"] * 5, ["y", "x"] * 5)
    assert ag.kappa == -1.0
    assert ag.kappa == cohen_kappa_score(["x", "y"] * 5, ["y", "x"] * 5)


def test_each_rater_one_different_label_gives_zero():
    a, b = ["x"] * 4, ["y"] * 4
    ag = agreement(a, b)
    assert ag.kappa == 0.0 == cohen_kappa_score(a, b)
    assert ag.raw_agreement == 0.0
    assert ag.chance_agreement == 0.0


def test_perfect_agreement_has_zero_standard_error():
    ag = agreement(["x", "y", "y"] * 10, ["x", "y", "y"] * 10)
    assert ag.kappa == 1.0
    assert ag.kappa_se == 0.0
    assert ag.kappa_ci95 == (1.0, 1.0)


def test_explicit_labels_ignore_outside_items_like_sklearn():
    a = ["x", "y", "z", "x", "y", "x"]
    b = ["x", "y", "x", "z", "x", "x"]
    labels, counts = confusion_matrix(a, b, labels=["y", "x"])
    assert labels == ("y", "x")
    assert counts.tolist() == sk_confusion_matrix(a, b, labels=["y", "x"]).tolist()
    assert counts.tolist() == [[1, 1], [0, 2]]
    ag = agreement(a, b, labels=["y", "x"])
    assert ag.n == 4
    assert ag.kappa == cohen_kappa_score(a, b, labels=["y", "x"])
    assert ag.warnings[0] == ("2 item(s) had a label outside the given labels ['y', 'x'] and were ignored")


def test_explicit_labels_none_in_a_is_undefined_not_an_error():
    a, b = ["x", "y"], ["z", "z"]
    with pytest.raises(ValueError):
        cohen_kappa_score(a, b, labels=["z"])
    ag = agreement(a, b, labels=["z"])
    assert ag.n == 0
    assert ag.kappa is None


def test_explicit_label_order_sets_weighted_positions():
    a = ["low", "mid", "high", "mid", "low", "high", "mid"]
    b = ["mid", "mid", "high", "low", "low", "mid", "high"]
    order = ["low", "mid", "high"]
    for weights in ("linear", "quadratic"):
        ag = agreement(a, b, labels=order, weights=weights)
        assert ag.kappa == cohen_kappa_score(a, b, labels=order, weights=weights)
    # Without an order, weighting strings is refused rather than done in alphabetical order.
    with pytest.raises(ValueError, match="needs the order of the labels"):
        agreement(a, b, weights="linear")
    assert agreement(a, b).labels == ("high", "low", "mid")


def test_duplicate_explicit_labels_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        confusion_matrix(["x"], ["x"], labels=["x", "x"])


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="same length"):
        confusion_matrix(["x", "y"], ["x"])


def test_many_labels_take_the_sorting_path_and_still_match_sklearn():
    rng = np.random.default_rng(3)
    pool = np.array([f"label-{i:02d}" for i in range(40)])
    a = rng.choice(pool, 500)
    b = np.where(rng.random(500) < 0.6, a, rng.choice(pool, 500))
    labels, counts = confusion_matrix(a, b)
    assert labels == tuple(sorted(set(a) | set(b)))
    assert counts.tolist() == sk_confusion_matrix(a, b).tolist()
    explicit = list(pool[::-1])
    assert confusion_matrix(a, b, labels=explicit)[1].tolist() == sk_confusion_matrix(a, b, labels=explicit).tolist()
    assert agreement(a, b).kappa == cohen_kappa_score(a, b)


def test_integer_labels_count_like_sklearn():
    a = [3, 1, 2, 3, 3, 10]
    b = [3, 2, 2, 1, 3, 10]
    labels, counts = confusion_matrix(a, b)
    assert labels == (1, 2, 3, 10)
    assert counts.tolist() == sk_confusion_matrix(a, b).tolist()


def test_nan_label_is_refused():
    with pytest.raises(ValueError, match="not equal to itself"):
        confusion_matrix([1.0, float("nan")], [1.0, 1.0])


def test_confusion_is_int64_and_counts_every_item():
    labels, counts = confusion_matrix(["b", "a", "b"], ["a", "a", "b"])
    assert labels == ("a", "b")
    assert counts.dtype == np.int64
    assert counts.tolist() == [[1, 0], [1, 1]]


# --- The INTERFACES `agreement` object ---------------------------------------------------------

INTERFACE_KEYS = {
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


def test_to_dict_has_the_interface_keys_and_plain_values():
    ag = agreement_from_counts([[200, 10], [17, 73]], ["correct", "incorrect"])
    d = ag.to_dict()
    assert d.keys() >= INTERFACE_KEYS
    assert d["confusion"] == {
        "correct/correct": 200,
        "correct/incorrect": 10,
        "incorrect/correct": 17,
        "incorrect/incorrect": 73,
    }
    assert d["labels"] == ["correct", "incorrect"]
    assert d["reason"] is None
    assert type(d["kappa"]) is float
    assert type(d["kappa_se"]) is float
    assert all(type(x) is float for x in d["kappa_ci95"])
    json.dumps(d, allow_nan=False)


def test_to_dict_of_undefined_kappa_is_null_with_reason_and_no_nan():
    for ag in (agreement([], []), agreement(["c"] * 3, ["c"] * 3)):
        d = ag.to_dict()
        assert d["kappa"] is None
        assert d["reason"]
        json.dumps(d, allow_nan=False)


def test_weighted_shares_for_weighted_kappa():
    ag = agreement_from_counts(TABLE10, ["1", "2", "3"], weights="linear")
    # kappa_w = (p_ow - p_ew) / (1 - p_ew) with agreement weights 1 - |i-j|/2.
    assert ag.kappa == pytest.approx(
        (ag.weighted_agreement - ag.weighted_chance_agreement) / (1 - ag.weighted_chance_agreement),
        abs=1e-14,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agreement_from_counts(TABLE10, ["1", "2", "3"])


# --- Label order: weighted kappa on ordered scales -----------------------------------------------


def _scale_ratings(levels, n, seed):
    """Two raters on an ordered scale: b is a off by -1, 0 or +1 step (within the scale) most of the time."""
    rng = np.random.default_rng(seed)
    k = len(levels)
    ia = rng.integers(0, k, size=n)
    step = rng.choice([-1, 0, 0, 1], size=n) + np.where(rng.random(n) < 0.1, rng.integers(-4, 5, size=n), 0)
    ib = np.clip(ia + step, 0, k - 1)
    return [levels[i] for i in ia], [levels[i] for i in ib]


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_numeric_labels_on_a_1_to_10_scale_order_numerically(weights):
    a, b = _scale_ratings(list(range(1, 11)), 400, seed=14)
    assert sorted(set(a) | set(b)) == list(range(1, 11))
    expected = cohen_kappa_score(a, b, labels=list(range(1, 11)), weights=weights)
    ag = agreement(a, b, weights=weights)
    assert ag.labels == tuple(range(1, 11))
    assert ag.kappa == pytest.approx(expected, abs=1e-12)
    # As floats too (JSON 1.0) and as a numpy array.
    assert agreement(np.array(a, dtype=float), np.array(b, dtype=float), weights=weights).kappa == pytest.approx(
        expected, abs=1e-12
    )


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_string_scale_1_to_10_needs_its_order_and_then_equals_sklearn(weights):
    a, b = _scale_ratings([str(i) for i in range(1, 11)], 400, seed=14)
    order = [str(i) for i in range(1, 11)]
    expected = cohen_kappa_score(a, b, labels=order, weights=weights)
    assert agreement(a, b, labels=order, weights=weights).kappa == pytest.approx(expected, abs=1e-12)
    # The alphabetical order ("1", "10", "2", …) is far off: that is what refusing it prevents.
    assert abs(cohen_kappa_score(a, b, weights=weights) - expected) > 0.05
    with pytest.raises(ValueError) as exc:
        agreement(a, b, weights=weights)
    assert str(exc.value) == (
        f"{weights}-weighted kappa needs the order of the labels, and string labels (1, 10, 2, 3, 4, 5, …) "
        "have none: alphabetical order would weigh the wrong disagreements. Give the order (labels=[...], "
        "or --labels L1,L2,… on the command line), or write the labels as numbers."
    )


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_low_medium_high_with_its_order_equals_sklearn(weights):
    order = ["low", "medium", "high"]
    a, b = _scale_ratings(order, 300, seed=7)
    expected = cohen_kappa_score(a, b, labels=order, weights=weights)
    ag = agreement(a, b, labels=order, weights=weights)
    assert ag.labels == ("low", "medium", "high")
    assert ag.kappa == pytest.approx(expected, abs=1e-12)
    assert abs(cohen_kappa_score(a, b, weights=weights) - expected) > 0.05
    with pytest.raises(ValueError, match="string labels \\(high, low, medium\\) have none"):
        agreement(a, b, weights=weights)


def test_unweighted_kappa_of_strings_needs_no_order():
    a, b = ["low", "high", "low"], ["low", "high", "high"]
    assert agreement(a, b).kappa == cohen_kappa_score(a, b)


def test_one_item_is_null_with_a_sentence_never_zero():
    ag = agreement(["correct"], ["incorrect"])
    assert ag.kappa is None
    assert ag.kappa_ci95 is None
    assert ag.reason == (
        "only one item: kappa needs at least two (with one, chance agreement is 0 or 1), so it is "
        "undefined; label more items"
    )


def test_a_rater_with_one_label_has_kappa_zero_and_no_interval():
    ag = agreement_from_counts([[7, 3], [0, 0]], ["correct", "incorrect"], raters=("the humans", "the judge"))
    assert ag.kappa == 0.0
    assert ag.kappa_se is None
    assert ag.kappa_ci95 is None
    assert ag.warnings[0].startswith("the humans gave every item the label 'correct', so kappa is 0 by construction")


def test_closed_form_interval_beyond_one_is_clipped_with_a_note():
    ag = agreement_from_counts([[9, 0], [1, 2]], ["correct", "incorrect"])
    assert ag.kappa == 0.75
    assert ag.kappa_ci95 == (0.2957661894716267, 1.0)
    assert ag.warnings == (
        "the closed-form 95% interval of kappa, [0.296, 1.204], reaches beyond [-1, 1], where kappa cannot "
        "go; it is shown clipped to [0.296, 1.000]. The large-sample formula is off at this size; read the "
        "bootstrap interval.",
    )


def test_labels_differing_by_case_or_whitespace_are_named():
    ag = agreement(["correct", "Correct ", "incorrect", "incorrect"], ["correct", "correct", "incorrect", "in correct"])
    assert ag.warnings[-1] == (
        "labels that differ only by case or whitespace are counted as different labels: 'Correct ', 'correct'. "
        "If they mean the same, write them the same way and measure again."
    )
    assert agreement(["a", "b"], ["a", "b"]).warnings == ()


@pytest.mark.parametrize(
    ("table", "labels", "pabak", "ac1"),
    [
        # Both raters said correct on all 10: Gwet's pe = sum pi(1 - pi) / (q - 1) = 0, so AC1 = 1 (irrCAC's
        # gwet.ac1.raw gives 1 on this table); PABAK = 2 * 1 - 1 = 1.
        ([[10, 0], [0, 0]], ["correct", "incorrect"], 1.0, 1.0),
        ([[10]], ["correct"], 1.0, 1.0),
        # One rater one label: pi = (0.85, 0.15), pe = 0.255, AC1 = (0.7 - 0.255) / 0.745.
        ([[7, 3], [0, 0]], ["correct", "incorrect"], 0.4, (0.7 - 0.255) / 0.745),
    ],
)
def test_pabak_and_ac1_are_defined_with_one_observed_class(table, labels, pabak, ac1):
    ag = agreement_from_counts(table, labels)
    assert ag.pabak == pytest.approx(pabak, abs=1e-15)
    assert ag.ac1 == pytest.approx(ac1, abs=1e-15)
