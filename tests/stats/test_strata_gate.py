"""Per-stratum agreement and the gate decision."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats import agreement, agreement_from_counts, gate_decide, per_stratum
from evalstats.bootstrap import BootstrapCI
from evalstats.strata import strata_tables


def test_per_stratum_matches_agreement_on_each_subset():
    rng = np.random.default_rng(0)
    n = 400
    a = rng.choice(["correct", "incorrect"], n, p=[0.7, 0.3])
    b = np.where(rng.random(n) < 0.85, a, rng.choice(["correct", "incorrect"], n))
    s = rng.choice(["policy_lookup", "how_to", "no_answer"], n, p=[0.6, 0.35, 0.05])
    out = per_stratum(a, b, s, min_n=30)
    assert list(out) == ["how_to", "no_answer", "policy_lookup"]
    for name, st in out.items():
        mask = s == name
        assert st.n == int(mask.sum())
        assert st.kappa == cohen_kappa_score(a[mask], b[mask])
        assert st.raw_agreement == float(np.mean(a[mask] == b[mask]))
        assert st.too_small == (st.n < 30)
    assert out["no_answer"].too_small is True
    assert out["policy_lookup"].too_small is False


def test_stratum_with_one_label_is_undefined_with_reason():
    a = ["correct"] * 5 + ["correct", "incorrect"] * 20
    b = ["correct"] * 5 + ["correct", "incorrect"] * 20
    s = ["tiny"] * 5 + ["big"] * 40
    out = per_stratum(a, b, s)
    assert out["tiny"].kappa is None
    assert "only one label" in out["tiny"].reason
    assert out["tiny"].to_dict() == {
        "n": 5, "raw_agreement": 1.0, "kappa": None, "reason": out["tiny"].reason,
        "too_small": True,
    }
    assert out["big"].kappa == 1.0


def test_strata_share_the_global_label_set():
    labels, tables = strata_tables(["x", "y", "z"], ["x", "y", "z"], ["s1", "s1", "s2"])
    assert labels == ("x", "y", "z")
    assert tables["s1"].tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    assert tables["s2"].tolist() == [[0, 0, 0], [0, 0, 0], [0, 0, 1]]


def test_strata_length_mismatch_is_refused():
    with pytest.raises(ValueError, match="same length"):
        per_stratum(["x"], ["x"], ["s", "t"])


# --- Gate ---------------------------------------------------------------------------------------


def judge(counts):
    return agreement_from_counts(counts, ["correct", "incorrect"])


PASSING = judge([[70, 4], [5, 21]])  # n 100, kappa 0.7637


def test_point_policy_passes_with_reasons_in_words():
    d = gate_decide(PASSING, threshold=0.7)
    assert d.status == "pass"
    assert d.reasons == ("n 100 >= minimum 30", "kappa 0.76 >= threshold 0.70")
    assert d.value == PASSING.kappa


def test_point_policy_fails_below_threshold():
    d = gate_decide(PASSING, threshold=0.8)
    assert d.status == "fail"
    assert d.reasons[1] == "kappa 0.76 below threshold 0.80"


def test_digits_grow_so_a_near_miss_never_prints_as_equal():
    ag = judge([[70, 4], [5, 21]])  # kappa 0.76322...
    d = gate_decide(ag, threshold=0.765)
    assert d.status == "fail"
    assert d.reasons[1] == "kappa 0.763 below threshold 0.765"
    d = gate_decide(ag, threshold=0.7635)
    assert d.reasons[1] == "kappa 0.7632 below threshold 0.7635"
    d = gate_decide(ag, threshold=0.76)
    assert d.reasons[1] == "kappa 0.763 >= threshold 0.760"


def test_small_n_fails_even_with_a_good_kappa():
    ag = judge([[8, 0], [1, 3]])
    d = gate_decide(ag, threshold=0.7, min_n=30)
    assert d.status == "fail"
    assert d.reasons[0] == "n 12 below the minimum 30"


def test_undefined_kappa_fails_with_its_reason():
    ag = agreement(["correct"] * 40, ["correct"] * 40)
    d = gate_decide(ag)
    assert d.status == "fail"
    assert d.reasons[1] == f"kappa undefined: {ag.reason}"
    assert d.value is None


def test_lower_bound_policy_uses_closed_form_interval_by_default():
    d = gate_decide(PASSING, threshold=0.6, policy="lower_bound")
    lo = PASSING.kappa_ci95[0]
    assert d.value == lo
    assert d.status == ("pass" if lo >= 0.6 else "fail")
    assert d.reasons[1].startswith("lower 95% bound of kappa (closed-form)")


def test_lower_bound_policy_prefers_a_given_bootstrap_interval():
    ci = BootstrapCI(lo=0.71, hi=0.85, iters=10_000, seed=0, undefined_share=0.0)
    d = gate_decide(PASSING, threshold=0.7, policy="lower_bound", ci=ci)
    assert d.status == "pass"
    assert d.reasons[1] == "lower 95% bound of kappa (bootstrap) 0.71 >= threshold 0.70 (kappa 0.76)"
    d = gate_decide(PASSING, threshold=0.7, policy="lower_bound", ci=(0.65, 0.85))
    assert d.status == "fail"
    assert d.value == 0.65


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError):
        gate_decide(PASSING, policy="vibes")
