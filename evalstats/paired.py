"""Paired comparison of two systems scored on the same questions.

Per question the difference B - A is +1 (only B right), -1 (only A right) or 0, so the whole
comparison lives in three counts. The bootstrap draws those counts, multinomial(n, shares), which
is resampling questions with replacement at a cost that does not depend on n.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats.qids import QidIndex, regressions_from_array, regressions_from_sequence, str_array

Z95 = 1.96  # the textbook constant; the brief's figures (e.g. the naive +-6.9 points) use it
Z80 = 0.8416212335729143  # the standard normal's 80th percentile: the one-sided multiplier of 80% power

# Below this many discordant questions the bootstrap of the three counts is degenerate (with none it
# is the zero-width pair [0, 0]; with a handful it takes few distinct values and covers far below 95%),
# so the interval is Newcombe's hybrid score interval instead.
RARE_DISCORDANT = 10

CI_BOOTSTRAP = "bootstrap_percentile"
CI_NEWCOMBE = "newcombe_hybrid_score"

HALF_THE_TIME = (
    "The resolvable gap is the 95% interval's half-width: a real gap of that size is found only about "
    "half the time; a real gap of the 80%-power size (detectable_gap_80: alpha 0.05, normal "
    "approximation) is found four times in five."
)


@dataclass(frozen=True)
class PairedComparison:
    """B against A on ``n`` shared questions; every ``*_points`` figure is in percentage points.

    ``ci95`` is the percentile bootstrap of the mean paired difference, or, with fewer than
    ``RARE_DISCORDANT`` discordant questions, Newcombe's hybrid score interval (``ci95_method`` says
    which, ``ci95_reason`` why); ``naive_ci95`` treats the two scores as independent samples (wrong
    for paired data: it ignores that most questions are answered alike, and is usually far too wide);
    ``se_points`` is the closed-form paired SE; ``mcnemar_p`` the exact McNemar p-value;
    ``detectable_gap_80`` the gap found with 80% power (None when no question is discordant).
    """

    n: int
    a_score: float
    b_score: float
    diff_points: float
    ci95: tuple[float, float]
    naive_ci95: tuple[float, float]
    se_points: float
    b_only: int
    a_only: int
    regressions: tuple[str, ...]
    resolvable_gap_points: float
    iters: int
    seed: int
    ci95_method: str = CI_BOOTSTRAP
    ci95_reason: str | None = None
    mcnemar_p: float = 1.0
    detectable_gap_80: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Exactly the INTERFACES.md ``compare`` object."""
        return {
            "n": self.n,
            "a_score": self.a_score,
            "b_score": self.b_score,
            "diff_points": self.diff_points,
            "ci95": list(self.ci95),
            "naive_ci95": list(self.naive_ci95),
            "se_points": self.se_points,
            "b_only": self.b_only,
            "a_only": self.a_only,
            "regressions": list(self.regressions),
            "resolvable_gap_points": self.resolvable_gap_points,
            "ci95_method": self.ci95_method,
            "ci95_reason": self.ci95_reason,
            "mcnemar_p": self.mcnemar_p,
            "detectable_gap_80": self.detectable_gap_80,
            "resolvable_gap_note": HALF_THE_TIME,
        }


def _flags(x: npt.ArrayLike, name: str) -> npt.NDArray[np.bool_]:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if arr.dtype != bool:
        if arr.size and not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must hold booleans (or 0/1)")
        arr = arr.astype(bool)
    return arr


def resolvable_gap(n: int, *, discordant_rate: float, z: float = Z95) -> float:
    """Smallest gap, in points, a paired comparison of n questions can tell from zero.

    With d the share of questions the systems answer differently, the SE of the paired
    difference near zero is sqrt(d / n) (McNemar), so a gap needs z * sqrt(d / n) to clear the
    interval: 100 * z * sqrt(d / n) points. It shrinks with sqrt(n): four times the questions
    resolve half the gap. (This is the interval's half-width; it is not a power calculation.)
    """
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= discordant_rate <= 1:
        raise ValueError(f"discordant_rate must be in [0, 1], got {discordant_rate}")
    return 100 * z * math.sqrt(discordant_rate / n)


def detectable_gap(n: int, *, discordant_rate: float, power_z: float = Z80, z: float = Z95) -> float:
    """The gap, in points, a paired comparison of n questions finds with 80% power at alpha 0.05.

    Normal approximation with the SE near zero, sqrt(d / n), under both hypotheses:
    100 * (z_0.975 + z_0.80) * sqrt(d / n), about 1.43 times ``resolvable_gap``. (Under the
    alternative the SE is sqrt((d - gap^2) / n), a little smaller, so the figure errs on the large side.)
    A gap of only the resolvable size sits on the interval's edge and is found about half the time.
    """
    return resolvable_gap(n, discordant_rate=discordant_rate, z=z + power_z)


def mcnemar_exact_p(b_only: int, a_only: int) -> float:
    """Exact McNemar p-value: the two-sided binomial test of b_only among the b_only + a_only
    discordant questions against 1/2, min(1, 2 * P(X <= min(b_only, a_only))) (the figure of
    statsmodels' ``mcnemar(table, exact=True)``). 1.0 when no question is discordant.
    """
    if b_only < 0 or a_only < 0:
        raise ValueError("b_only and a_only must be non-negative")
    m = b_only + a_only
    if m == 0:
        return 1.0
    # Imported here: scipy.stats takes half a second to import and only this function needs it.
    from scipy.stats import binom

    return float(min(1.0, 2 * binom.cdf(min(b_only, a_only), m, 0.5)))


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    p = x / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def newcombe_paired_ci(
    *, both_right: int, b_only: int, a_only: int, neither: int, z: float = Z95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval, in points, of the paired difference B - A.

    Newcombe, R. G. (1998), "Improved confidence intervals for the difference between binomial
    proportions based on paired data", Statistics in Medicine 17, 2635-2650, method 10: the Wilson
    score intervals (l1, u1) of B's score p1 and (l2, u2) of A's score p2, combined square-and-add
    with the correlation of the pairs, phi = C / sqrt(product of the four margins), where, with
    X = both_right * neither - b_only * a_only, C = X - n/2 when X > n/2, X when X < 0, else 0
    (and phi = 0 when a margin is empty):
    lo = D - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2),
    hi = D + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2), clipped to [-100, 100].
    Its coverage stays near 95% when few questions are discordant, and it is never the zero-width
    pair: with none discordant it still spans zero by the uncertainty of the scores themselves
    (Fagerland, Lydersen & Laake (2014), Statistics in Medicine 33, 2850-2875, recommend it there).
    """
    counts = (both_right, b_only, a_only, neither)
    if min(counts) < 0:
        raise ValueError("counts must be non-negative")
    n = sum(counts)
    if n == 0:
        raise ValueError("no questions to compare")
    p1 = (both_right + b_only) / n
    p2 = (both_right + a_only) / n
    d = p1 - p2
    l1, u1 = _wilson(both_right + b_only, n, z)
    l2, u2 = _wilson(both_right + a_only, n, z)
    margins = (both_right + b_only) * (a_only + neither) * (both_right + a_only) * (b_only + neither)
    phi = 0.0
    if margins > 0:
        x = both_right * neither - b_only * a_only
        c = x - n / 2 if x > n / 2 else (x if x < 0 else 0.0)
        phi = c / math.sqrt(margins)
    lo = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    hi = d + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return 100 * max(-1.0, lo), 100 * min(1.0, hi)


def n_for_gap(gap: float, *, discordant_rate: float, z: float = Z95) -> int:
    """Questions needed to resolve a gap of ``gap`` points at this discordance rate.

    The inverse of ``resolvable_gap``: n = ceil(d * (100 * z / gap)^2).
    """
    if gap <= 0:
        raise ValueError(f"gap must be positive (in points), got {gap}")
    if not 0 < discordant_rate <= 1:
        raise ValueError(f"discordant_rate must be in (0, 1], got {discordant_rate}")
    # The small allowance keeps an exact n (e.g. 100.00000000000001) from rounding up.
    return max(1, math.ceil(discordant_rate * (100 * z / gap) ** 2 - 1e-9))


def paired_bootstrap_ci(b_only: int, a_only: int, n: int, *, iters: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% bootstrap interval, in points, of the mean paired difference B - A.

    One replicate draws (b_only, a_only, ties) ~ multinomial(n, observed shares), which is
    resampling the n questions with replacement; its difference is 100 * (b_only - a_only) / n.
    """
    if n <= 0:
        raise ValueError("no questions to compare")
    if iters < 1:
        raise ValueError(f"iters must be at least 1, got {iters}")
    if b_only < 0 or a_only < 0 or b_only + a_only > n:
        raise ValueError("b_only and a_only must be non-negative and sum to at most n")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.array([b_only, a_only, n - b_only - a_only]) / n, size=iters)
    diffs = 100 * (draws[:, 0] - draws[:, 1]) / n
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(lo), float(hi)


def paired_diff(
    qids: QidIndex | Sequence[str] | npt.NDArray[np.str_],
    a_correct: npt.ArrayLike,
    b_correct: npt.ArrayLike,
    *,
    iters: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """Compare system B with system A question by question (positive diff: B is better): count the
    outcomes, then ``paired_counts``.

    ``qids`` may be a ``QidIndex`` (checked distinct when it was built: the fast path for repeated
    comparisons over one dataset version, only the regressions are touched), a numpy str array (no
    Python code per qid, see ``evalstats.qids.regressions_from_array``), a list of str (turned into one,
    ``evalstats.qids.str_array``) or any sequence (each item taken as ``str(item)``; a set checks it).
    All give the same comparison and refuse duplicates alike."""
    pick: Callable[[npt.NDArray[np.bool_]], tuple[str, ...]]
    array: npt.NDArray[np.str_] | None = None
    if isinstance(qids, np.ndarray) and qids.dtype.kind == "U" and qids.ndim == 1:
        array = qids
    elif isinstance(qids, list):
        array = str_array(qids)
    if isinstance(qids, QidIndex):
        n_qids, pick = len(qids), qids.picked
    elif array is not None:
        checked = array
        n_qids = checked.shape[0]

        def pick(mask: npt.NDArray[np.bool_]) -> tuple[str, ...]:
            return regressions_from_array(checked, mask)

    else:
        as_str = [str(q) for q in qids]
        n_qids = len(as_str)

        def pick(mask: npt.NDArray[np.bool_]) -> tuple[str, ...]:
            return regressions_from_sequence(as_str, mask)

    a = _flags(a_correct, "a_correct")
    b = _flags(b_correct, "b_correct")
    if not n_qids == a.shape[0] == b.shape[0]:
        raise ValueError(
            f"qids, a_correct and b_correct must have the same length, got {n_qids}, {a.shape[0]}, {b.shape[0]}"
        )
    a_only = np.greater(a, b)  # a and not b, in one pass with no temporary
    regressions = pick(a_only)
    n = n_qids
    if n == 0:
        raise ValueError("no questions to compare")
    a_right, b_right = int(np.count_nonzero(a)), int(np.count_nonzero(b))
    # Consistent by construction, so the checks of paired_counts are not repeated.
    b_only = b_right - (a_right - len(regressions))
    return _from_counts(
        n=n, a_right=a_right, b_right=b_right, b_only=b_only, regressions=regressions, iters=iters, seed=seed
    )


def paired_counts(
    *,
    n: int,
    a_right: int,
    b_right: int,
    b_only: int,
    regressions: Collection[str],
    iters: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """The paired comparison from its counts: n questions, how many each system got right, how many
    only B got right, and the qids only A got right (the regressions; their number is a_only).

    For callers that count without per-question arrays (set algebra over a million qids,
    comparisons.selectors); ``paired_diff`` counts its arrays and ends here too.

    Closed-form SE of the paired difference of proportions (Agresti, Categorical Data Analysis,
    10.1): with p10 = b_only / n and p01 = a_only / n,
    SE = sqrt((p10 + p01 - (p10 - p01)^2) / n).
    Naive interval: diff +- 1.96 * sqrt(pa(1-pa)/n + pb(1-pb)/n), as if A and B were scored on
    different questions. ``resolvable_gap_points`` uses the observed discordance rate.
    """
    _check_counts(n=n, a_right=a_right, b_right=b_right, b_only=b_only, a_only=len(regressions))
    return _from_counts(
        n=n,
        a_right=a_right,
        b_right=b_right,
        b_only=b_only,
        regressions=tuple(sorted(regressions)),
        iters=iters,
        seed=seed,
    )


def _check_counts(*, n: int, a_right: int, b_right: int, b_only: int, a_only: int) -> None:
    if n <= 0:
        raise ValueError("no questions to compare")
    # both right + only A + only B must fit in n, and "both right" is the same count seen from A and from B.
    if not (
        0 <= b_only <= b_right and a_only <= a_right and a_right + b_only <= n and a_right - a_only == b_right - b_only
    ):
        raise ValueError(
            f"inconsistent counts: n={n}, a_right={a_right}, b_right={b_right}, b_only={b_only}, "
            f"a_only={a_only} (both right must be a_right - a_only = b_right - b_only)"
        )


def _from_counts(
    *, n: int, a_right: int, b_right: int, b_only: int, regressions: tuple[str, ...], iters: int, seed: int
) -> PairedComparison:
    """``paired_counts`` once the counts are checked and the regressions sorted."""
    a_only = len(regressions)
    a_score = a_right / n
    b_score = b_right / n
    # From the integer counts, so 24 / 300 gives exactly 8.0 points.
    diff_points = 100 * (b_only - a_only) / n

    discordant = b_only + a_only
    if discordant < RARE_DISCORDANT:
        both_right = a_right - a_only
        ci95 = newcombe_paired_ci(
            both_right=both_right, b_only=b_only, a_only=a_only, neither=n - both_right - b_only - a_only
        )
        method = CI_NEWCOMBE
        reason: str | None = (
            f"{discordant} discordant question{'s' if discordant != 1 else ''} (fewer than {RARE_DISCORDANT}): "
            f"the bootstrap of so few is degenerate, so the interval is Newcombe's hybrid score interval"
        )
    else:
        ci95 = paired_bootstrap_ci(b_only, a_only, n, iters=iters, seed=seed)
        method, reason = CI_BOOTSTRAP, None

    d = (b_only - a_only) / n
    se = math.sqrt(max((b_only + a_only) / n - d * d, 0.0) / n)
    naive_half = 100 * Z95 * math.sqrt(a_score * (1 - a_score) / n + b_score * (1 - b_score) / n)

    return PairedComparison(
        n=n,
        a_score=a_score,
        b_score=b_score,
        diff_points=diff_points,
        ci95=ci95,
        naive_ci95=(diff_points - naive_half, diff_points + naive_half),
        se_points=100 * se,
        b_only=b_only,
        a_only=a_only,
        regressions=regressions,
        resolvable_gap_points=resolvable_gap(n, discordant_rate=discordant / n),
        iters=iters,
        seed=seed,
        ci95_method=method,
        ci95_reason=reason,
        mcnemar_p=mcnemar_exact_p(b_only, a_only),
        detectable_gap_80=detectable_gap(n, discordant_rate=discordant / n) if discordant else None,
    )
