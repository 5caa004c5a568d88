"""Per-stratum agreement."""
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats import per_stratum
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
