"""Agreement per stratum, with a flag on strata too small to support a conclusion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import Labels, as_column, encode_one, encode_pair
from evalstats.agreement import Agreement, agreement_from_counts


@dataclass(frozen=True)
class StratumAgreement:
    """One stratum's figures; ``too_small`` when n < min_n (read its kappa as anecdote)."""

    n: int
    raw_agreement: float | None
    kappa: float | None
    reason: str | None
    too_small: bool
    agreement: Agreement

    def to_dict(self) -> dict[str, Any]:
        """The INTERFACES ``per_stratum`` entry, plus ``too_small`` and ``reason``."""
        return {
            "n": self.n,
            "raw_agreement": self.raw_agreement,
            "kappa": self.kappa,
            "reason": self.reason,
            "too_small": self.too_small,
        }


def strata_tables(
    a: npt.ArrayLike, b: npt.ArrayLike, strata: npt.ArrayLike, *, labels: Sequence[Any] | None = None
) -> tuple[Labels, dict[str, npt.NDArray[np.intp]]]:
    """(labels, {stratum: k x k counts}) in one pass over the items.

    Labels default to the sorted union over all strata, so every stratum is counted on the same
    label set (which weighted kappa needs: a label's position is its ordinal value).
    Items with a label outside an explicit ``labels`` are ignored, as in ``confusion_matrix``.
    """
    a = as_column(a, "a")
    b = as_column(b, "b")
    s = as_column(strata, "strata")
    if not a.shape[0] == b.shape[0] == s.shape[0]:
        raise ValueError(f"a, b and strata must have the same length, got {a.shape[0]}, {b.shape[0]}, {s.shape[0]}")
    labels, ca, cb = encode_pair(a, b, labels)
    names, cs = encode_one(s.astype(str))
    k = len(labels)
    keep = (ca >= 0) & (cb >= 0)
    flat = np.bincount((cs[keep] * k + ca[keep]) * k + cb[keep], minlength=len(names) * k * k).reshape(len(names), k, k)
    return labels, {str(name): flat[i] for i, name in enumerate(names)}


def per_stratum(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    strata: npt.ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    min_n: int = 30,
    positive: str | None = "correct",
) -> dict[str, StratumAgreement]:
    """Agreement within each stratum, keyed by stratum name (sorted)."""
    labels, tables = strata_tables(a, b, strata, labels=labels)
    out: dict[str, StratumAgreement] = {}
    for name, counts in tables.items():
        ag = agreement_from_counts(counts, labels, weights=weights, positive=positive)
        out[name] = StratumAgreement(
            n=ag.n,
            raw_agreement=ag.raw_agreement,
            kappa=ag.kappa,
            reason=ag.reason,
            too_small=ag.n < min_n,
            agreement=ag,
        )
    return out
