"""Cohen's kappa from k x k confusion counts: the counts, the weight matrix, kappa for a batch of tables
(the bootstrap's), and the references it is held to.

Everything is computed from the k x k confusion counts, so the cost after counting does not
depend on the number of items.

Reference behaviour, held to the last digit by tests/stats:

* ``kappa`` is scikit-learn's ``cohen_kappa_score`` (same weight matrix, same
  ``expected = outer(column sums, row sums) / n``, same order of floating-point operations).
  Where scikit-learn returns NaN with an ``UndefinedMetricWarning`` (no items; one label only)
  we return ``None`` and say why in ``reason``.
* ``kappa_se``, ``kappa_se0`` and ``kappa_ci95`` are statsmodels' ``cohens_kappa(table, wt=...)``
  ``std_kappa``, ``std_kappa0`` and ``(kappa_low, kappa_upp)``: the large-sample (Fleiss, Cohen &
  Everitt 1969) variance, with statsmodels' weights ``|i-j|/(k-1)`` or ``(i-j)^2/(k-1)^2``.
  The interval is centred on statsmodels' own kappa, which may differ from ``kappa`` in the last
  bit or two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import Labels, as_column, encode_pair

WEIGHTS = (None, "linear", "quadratic")


# scipy.stats.norm.isf(0.025), the multiplier statsmodels uses for its 95% interval; written out
# because importing scipy.stats costs half a second (a test checks the two are equal).
Z_975 = 1.9599639845400545


def _finite(x: float | None) -> float | None:
    """A plain float, or None for NaN/inf: NaN never leaves this package."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def confusion_matrix(
    a: npt.ArrayLike, b: npt.ArrayLike, labels: Sequence[Any] | None = None
) -> tuple[Labels, npt.NDArray[np.int64]]:
    """Count label pairs: rows are `a`'s labels, columns `b`'s; O(n) at numpy speed.

    Returns ``(labels, counts)`` with ``counts`` a k x k int64 array. ``labels`` defaults to the
    sorted union of both columns. With explicit ``labels``, an item whose label (in either
    column) is outside the set is ignored, as ``sklearn.metrics.confusion_matrix`` does; the
    counts then sum to fewer than ``len(a)`` items.
    """
    a = as_column(a, "a")
    b = as_column(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b must have the same length, got {a.shape[0]} and {b.shape[0]}")
    labels, ca, cb = encode_pair(a, b, labels)
    k = len(labels)
    if k == 0:
        return (), np.zeros((0, 0), dtype=np.int64)
    keep = (ca >= 0) & (cb >= 0)
    if not keep.all():
        ca, cb = ca[keep], cb[keep]
    counts = np.bincount(ca * k + cb, minlength=k * k).astype(np.int64, copy=False)
    return labels, counts.reshape(k, k)


def unordered_problem(labels: Sequence[Any], what: str) -> str | None:
    """Why ``what`` (a figure that needs the labels' order) cannot use ``labels`` in their sorted
    order, or None when it can.

    Numbers carry an order. Strings sorted alphabetically do not ("10" comes before "2", "high"
    before "low"), so a figure that weighs disagreements by distance needs the order given.
    """
    if not any(isinstance(x, str) for x in labels):
        return None
    shown = ", ".join(str(x) for x in labels[:6]) + (", …" if len(labels) > 6 else "")
    return (
        f"{what} needs the order of the labels, and string labels ({shown}) have "
        "none: alphabetical order would weigh the wrong disagreements. Give the order (labels=[...], "
        "or --labels L1,L2,… on the command line), or write the labels as numbers."
    )


def unordered_weights_problem(labels: Sequence[Any], weights: str | None) -> str | None:
    """Why ``weights`` cannot be used on ``labels`` in their sorted order, or None when they can."""
    if weights is None:
        return None
    return unordered_problem(labels, f"{weights}-weighted kappa")


def weight_matrix(k: int, weights: str | None) -> npt.NDArray[np.float64]:
    """scikit-learn's disagreement weights: 1 off the diagonal, or |i-j|, or (i-j)^2."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if weights is None:
        w = np.ones([k, k], dtype=np.float64)
        np.fill_diagonal(w, 0)
        return w
    w = np.zeros([k, k], dtype=np.float64)
    w += np.arange(k)
    return np.abs(w - w.T) if weights == "linear" else (w - w.T) ** 2


def kappa_batch(tables: npt.ArrayLike, w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Kappa of many k x k tables at once (shape (r, k, k)); NaN where undefined.

    Same formula as scikit-learn; used by the bootstrap, where a few ulps do not matter.
    """
    tables = np.asarray(tables, dtype=np.float64)
    col = tables.sum(axis=1)  # (r, k)
    row = tables.sum(axis=2)
    n = col.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = col[:, :, None] * row[:, None, :] / n[:, None, None]
        num = (w * tables).sum(axis=(1, 2))
        den = (w * expected).sum(axis=(1, 2))
        kappa: npt.NDArray[np.float64] = 1 - num / den
    kappa[~(den > 0)] = np.nan
    return kappa


def _sklearn_kappa(counts: npt.NDArray[np.int64], weights: str | None) -> float | None:
    """cohen_kappa_score on a confusion table, operation for operation; None where it is NaN."""
    confusion = counts.astype(np.float64)
    k = confusion.shape[0]
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    numerator: npt.NDArray[np.float64] | np.float64 = np.outer(sum0, sum1)
    denominator = np.sum(sum0)
    if denominator == 0:
        return None
    expected = numerator / denominator
    w_mat = weight_matrix(k, weights)
    numerator = np.sum(w_mat * confusion)
    denominator = np.sum(w_mat * expected)
    if denominator == 0:
        return None
    return float(1 - numerator / denominator)


def _statsmodels_kappa(counts: npt.NDArray[np.int64], weights: str | None) -> tuple[float, float, float]:
    """(kappa, var_kappa, var_kappa0) exactly as statsmodels 0.14/0.15 ``cohens_kappa``.

    Mirrors statsmodels/stats/inter_rater.py line by line so the standard errors agree to the
    last digit, including the weighted case where statsmodels switches to the SAS form of the
    weights (agreement weights 1 - w with w scaled to [0, 1]).
    """
    table = np.asarray(counts, float)
    agree = np.diag(table).sum()
    nobs = table.sum()
    probs = table / nobs
    freqs = probs
    probs_diag = np.diag(probs)
    freq_row = table.sum(1) / nobs
    freq_col = table.sum(0) / nobs
    prob_exp = freq_col * freq_row[:, None]
    agree_exp = np.diag(prob_exp).sum()
    if weights is None:
        kappa = (agree / nobs - agree_exp) / (1 - agree_exp)
        term_a = probs_diag * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2
        term_a = term_a.sum()
        term_b = probs * (freq_col[:, None] + freq_row) ** 2
        d_idx = np.arange(table.shape[0])
        term_b[d_idx, d_idx] = 0
        term_b = (1 - kappa) ** 2 * term_b.sum()
        term_c = (kappa - agree_exp * (1 - kappa)) ** 2
        var_kappa = (term_a + term_b - term_c) / (1 - agree_exp) ** 2 / nobs
        term_c = freq_col * freq_row * (freq_col + freq_row)
        var_kappa0 = agree_exp + agree_exp**2 - term_c.sum()
        var_kappa0 /= (1 - agree_exp) ** 2 * nobs
        return kappa, var_kappa, var_kappa0
    scores = np.asarray(np.arange(table.shape[0]), float)
    if weights == "linear":
        wts = np.abs(scores[:, None] - scores) / (scores[-1] - scores[0])
    else:
        wts = (scores[:, None] - scores) ** 2 / (scores[-1] - scores[0]) ** 2
    kappa = 1 - (wts * table).sum() / nobs / (wts * prob_exp).sum()
    w = 1.0 - wts
    w_row = (freq_col * w).sum(1)
    w_col = (freq_row[:, None] * w).sum(0)
    agree_wexp = (w * freq_col * freq_row[:, None]).sum()
    term_a = freqs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
    fac = 1.0 / ((1 - agree_wexp) ** 2 * nobs)
    var_kappa = term_a.sum() - (kappa - agree_wexp * (1 - kappa)) ** 2
    var_kappa *= fac
    freqse = freq_col * freq_row[:, None]
    var_kappa0 = (freqse * (w - (w_col + w_row[:, None])) ** 2).sum()
    var_kappa0 -= agree_wexp**2
    var_kappa0 *= fac
    return kappa, var_kappa, var_kappa0


def _std(var: float) -> float | None:
    """sqrt of a variance; a variance that is zero up to rounding (perfect agreement) is 0."""
    var = float(var)
    if not math.isfinite(var):
        return None
    if var < 0:
        # statsmodels returns NaN here; the true variance is 0 and the negative is rounding.
        return 0.0 if var > -1e-12 else None
    return math.sqrt(var)
