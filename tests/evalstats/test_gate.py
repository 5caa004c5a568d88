"""The gate decision: point and lower-bound policies, minimum n, reasons in words."""
import pytest

from evalstats import agreement, agreement_from_counts, gate_decide
from evalstats.bootstrap import BootstrapCI

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
