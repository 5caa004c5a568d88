"""Agreement between two raters: the `Agreement` record (raw agreement, Cohen's kappa with its standard
errors and interval, chance agreement, prevalence and the kappa paradox flag), from the confusion
counts (`agreement_from_counts`) or from two columns of labels (`agreement`). The kappa arithmetic
itself is evalstats.kappa."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from evalstats._encode import Labels, as_column
from evalstats.kappa import (
    WEIGHTS,
    Z_975,
    _finite,
    _sklearn_kappa,
    _statsmodels_kappa,
    _std,
    confusion_matrix,
    unordered_weights_problem,
    weight_matrix,
)

# Thresholds for the kappa-paradox warning: raw agreement that looks good beside a kappa that
# says "barely better than chance". 0.4 is the usual "fair/moderate" boundary (Landis & Koch).
PARADOX_RAW = 0.8


PARADOX_KAPPA = 0.4


@dataclass(frozen=True)
class Agreement:
    """Agreement of two raters over one label set, read off their confusion counts.

    Rows of ``confusion`` are rater a, columns rater b, both in ``labels`` order.
    ``raw_agreement`` and ``chance_agreement`` are unweighted shares (same label / same label by
    chance); with ``weights`` the weighted shares are ``weighted_agreement`` and
    ``weighted_chance_agreement`` (1 - disagreement weight scaled to [0, 1]).
    ``pabak`` (k * p_o - 1) / (k - 1) and Gwet's ``ac1`` are unweighted and use k = len(labels).
    ``prevalence_index`` (n_pp - n_qq) / n and ``bias_index`` (n_pq - n_qp) / n (Byrt, Bishop &
    Carlin 1993) exist for two labels only; p is ``positive`` when it is a label, else labels[0].
    ``always_correct_agreement`` is the share of items where a says ``positive``: the raw
    agreement a rater that always says ``positive`` would reach.
    """

    n: int
    labels: Labels
    confusion: tuple[tuple[int, ...], ...]
    weights: str | None
    raw_agreement: float | None
    chance_agreement: float | None
    kappa: float | None
    reason: str | None
    kappa_se: float | None
    kappa_se0: float | None
    kappa_ci95: tuple[float, float] | None
    pabak: float | None
    ac1: float | None
    prevalence_index: float | None
    bias_index: float | None
    positive: str | None
    always_correct_agreement: float | None
    weighted_agreement: float | None = None
    weighted_chance_agreement: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def counts(self) -> npt.NDArray[np.int64]:
        """The confusion counts as a k x k int64 array."""
        k = len(self.labels)
        return np.array(self.confusion, dtype=np.int64).reshape(k, k)

    def to_dict(self) -> dict[str, Any]:
        """The INTERFACES.md ``agreement`` object (``bootstrap_ci95`` and ``per_stratum`` are
        filled by ``report.agreement_report``); JSON-ready, no NaN."""
        return {
            "n": self.n,
            "labels": list(self.labels),
            "raw_agreement": self.raw_agreement,
            "chance_agreement": self.chance_agreement,
            "kappa": self.kappa,
            "reason": self.reason,
            "kappa_se": self.kappa_se,
            "kappa_se0": self.kappa_se0,
            "kappa_ci95": list(self.kappa_ci95) if self.kappa_ci95 is not None else None,
            "bootstrap_ci95": None,
            "weights": self.weights,
            "pabak": self.pabak,
            "ac1": self.ac1,
            "prevalence_index": self.prevalence_index,
            "bias_index": self.bias_index,
            "positive": self.positive,
            "always_correct_agreement": self.always_correct_agreement,
            "weighted_agreement": self.weighted_agreement,
            "weighted_chance_agreement": self.weighted_chance_agreement,
            "confusion": {
                f"{la}/{lb}": self.confusion[i][j]
                for i, la in enumerate(self.labels)
                for j, lb in enumerate(self.labels)
            },
            "per_stratum": {},
            "warnings": list(self.warnings),
        }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _undefined_reason(n: int, counts: npt.NDArray[np.int64], labels: Labels) -> str:
    if n == 0:
        return "no items to compare; kappa is undefined"
    if n == 1:
        return (
            "only one item: kappa needs at least two (with one, chance agreement is 0 or 1), so it is "
            "undefined; label more items"
        )
    used = [labels[i] for i in range(len(labels)) if counts[i, :].sum() or counts[:, i].sum()]
    return (
        f"only one label ({used[0]!r}) occurs in both raters' labels, so chance agreement is 1 and kappa is undefined"
    )


def _single_label_rater(counts: npt.NDArray[np.int64], labels: Labels, raters: tuple[str, str]) -> str | None:
    """The warning for a table where one rater used a single label (the other more than one), or None."""
    for name, sums in ((raters[0], counts.sum(axis=1)), (raters[1], counts.sum(axis=0))):
        used = np.flatnonzero(sums)
        if len(used) == 1:
            return (
                f"{name} gave every item the label {labels[int(used[0])]!r}, so kappa is 0 by construction "
                "(no agreement beyond chance can be shown) and has no interval; its raw agreement is the "
                "share of that label. Check that rater, or label items it would put elsewhere."
            )
    return None


def label_spelling_warning(labels: Sequence[Any]) -> str | None:
    """A sentence naming string labels that differ only by case or surrounding/inner whitespace, or None."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        if isinstance(label, str):
            groups.setdefault(" ".join(label.split()).casefold(), []).append(label)
    clashes = [sorted(g) for g in groups.values() if len(g) > 1]
    if not clashes:
        return None
    shown = "; ".join(", ".join(repr(x) for x in g) for g in sorted(clashes))
    return (
        f"labels that differ only by case or whitespace are counted as different labels: {shown}. "
        "If they mean the same, write them the same way and measure again."
    )


def agreement_from_counts(
    counts: npt.ArrayLike,
    labels: Sequence[Any],
    *,
    weights: str | None = None,
    positive: str | None = None,
    extra_warnings: Sequence[str] = (),
    raters: tuple[str, str] = ("a", "b"),
) -> Agreement:
    """Every agreement figure from a k x k confusion table (rows rater a, columns rater b); the warnings call
    the two raters by `raters`."""
    counts = np.asarray(counts)
    labels = tuple(labels)
    k = len(labels)
    if counts.shape != (k, k):
        raise ValueError(f"counts must be {k}x{k} for {k} labels, got shape {counts.shape}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if (counts < 0).any() or not np.array_equal(counts, np.round(counts)):
        raise ValueError("counts must be non-negative whole numbers")
    counts = counts.astype(np.int64)
    n = int(counts.sum())
    confusion = tuple(tuple(int(c) for c in row) for row in counts)
    positive_given = positive if positive in labels else None
    warnings = list(extra_warnings)

    if n == 0:
        return Agreement(
            n=0,
            labels=labels,
            confusion=confusion,
            weights=weights,
            raw_agreement=None,
            chance_agreement=None,
            kappa=None,
            reason=_undefined_reason(0, counts, labels),
            kappa_se=None,
            kappa_se0=None,
            kappa_ci95=None,
            pabak=None,
            ac1=None,
            prevalence_index=None,
            bias_index=None,
            positive=positive,
            always_correct_agreement=None,
            warnings=tuple(warnings),
        )

    f = counts.astype(np.float64)
    row = f.sum(axis=1) / n
    col = f.sum(axis=0) / n
    p_o = float(np.trace(f) / n)
    p_e = float(np.dot(row, col))

    kappa = _sklearn_kappa(counts, weights) if n > 1 else None
    reason = None
    kappa_se = kappa_se0 = kappa_ci95 = None
    if kappa is None:
        reason = _undefined_reason(n, counts, labels)
    else:
        sm_kappa, var, var0 = _statsmodels_kappa(counts, weights)
        kappa_se = _std(var)
        kappa_se0 = _std(var0)
        single = _single_label_rater(counts, labels, raters)
        if single is not None:
            # Kappa is 0 by construction, not by measurement; statsmodels' zero standard error would
            # print as the certain interval [0, 0].
            kappa_se = None
            warnings.append(single)
        elif kappa_se is not None:
            # statsmodels: delta = norm.isf(alpha) * std_kappa with alpha = 0.025.
            delta = Z_975 * kappa_se
            lo, hi = float(sm_kappa - delta), float(sm_kappa + delta)
            kappa_ci95 = (max(lo, -1.0), min(hi, 1.0))
            if kappa_ci95 != (lo, hi):
                warnings.append(
                    f"the closed-form 95% interval of kappa, [{lo:.3f}, {hi:.3f}], reaches beyond [-1, 1], "
                    f"where kappa cannot go; it is shown clipped to [{kappa_ci95[0]:.3f}, {kappa_ci95[1]:.3f}]. "
                    "The large-sample formula is off at this size; read the bootstrap interval."
                )

    weighted_agreement = weighted_chance = None
    if weights is not None and k > 1:
        scaled = weight_matrix(k, weights) / weight_matrix(k, weights).max()
        weighted_agreement = float(1 - (scaled * f).sum() / n)
        weighted_chance = float(1 - (scaled * np.outer(row, col)).sum())

    # With one observed label the task is still at least binary (two raters who can only say one thing
    # are not rating), so PABAK and AC1 take k = 2 there: both are 1 for full agreement on that label.
    k_task = max(k, 2)
    # From the integer counts, so a 2x2 with p_o = 0.7 gives exactly 0.4.
    pabak: float | None = (k_task * int(np.trace(counts)) - n) / ((k_task - 1) * n)
    # Gwet (2008): chance agreement from the mean of the two raters' label shares.
    pi = (row + col) / 2
    pe_gwet = float((pi * (1 - pi)).sum() / (k_task - 1))
    ac1: float | None = (p_o - pe_gwet) / (1 - pe_gwet)
    spelling = label_spelling_warning([labels[i] for i in range(k) if counts[i, :].sum() or counts[:, i].sum()])
    if spelling:
        warnings.append(spelling)

    prevalence_index = bias_index = None
    if k == 2:
        p = labels.index(positive_given) if positive_given is not None else 0
        q = 1 - p
        prevalence_index = float((counts[p, p] - counts[q, q]) / n)
        bias_index = float((counts[p, q] - counts[q, p]) / n)

    always = None
    if positive_given is not None:
        always = float(counts[labels.index(positive_given), :].sum() / n)

    if kappa is not None and p_o >= PARADOX_RAW and kappa < PARADOX_KAPPA:
        top = int(np.argmax(row + col))
        warnings.append(
            f"raw agreement is {_pct(p_o)} but kappa is only {kappa:.2f}: label "
            f"{labels[top]!r} makes up {_pct((row[top] + col[top]) / 2)} of the labels, so two "
            f"raters guessing with these base rates would already agree {_pct(p_e)} of the time. "
            "The raw figure mostly reflects the base rate, not skill (the kappa paradox); read "
            f"kappa beside PABAK ({pabak:.2f}) and AC1 ({ac1:.2f})."
        )
    if always is not None and p_o <= always:
        warnings.append(
            f"a rater that always says {positive_given!r} would agree with {raters[0]} on {_pct(always)} "
            f"of items, at least as often as {raters[1]} does ({_pct(p_o)})."
        )

    return Agreement(
        n=n,
        labels=labels,
        confusion=confusion,
        weights=weights,
        raw_agreement=p_o,
        chance_agreement=p_e,
        kappa=kappa,
        reason=reason,
        kappa_se=kappa_se,
        kappa_se0=kappa_se0,
        kappa_ci95=kappa_ci95,
        pabak=_finite(pabak),
        ac1=_finite(ac1),
        prevalence_index=prevalence_index,
        bias_index=bias_index,
        positive=positive,
        always_correct_agreement=always,
        weighted_agreement=weighted_agreement,
        weighted_chance_agreement=weighted_chance,
        warnings=tuple(warnings),
    )


def agreement(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    positive: str | None = "correct",
) -> Agreement:
    """Agreement of rater b with rater a over paired label columns.

    With explicit ``labels``, items labelled outside the set are ignored (scikit-learn's rule)
    and a warning says how many. Without them labels sort (numbers numerically); ``weights`` on
    string labels without an explicit order is refused (ValueError), since alphabetical order is
    no order of a scale.
    """
    a = as_column(a, "a")
    labels_used, counts = confusion_matrix(a, b, labels)
    if labels is None:
        problem = unordered_weights_problem(labels_used, weights)
        if problem:
            raise ValueError(problem)
    extra = dropped_labels_warnings(a.shape[0] - int(counts.sum()), labels_used)
    return agreement_from_counts(counts, labels_used, weights=weights, positive=positive, extra_warnings=extra)


def dropped_labels_warnings(dropped: int, labels: Sequence[Any]) -> list[str]:
    """The warning `agreement` gives when `dropped` items were labelled outside `labels` (none when 0), for a
    caller that counts the confusion table itself (in SQL, say) and hands it to `agreement_from_counts`."""
    if not dropped:
        return []
    return [f"{dropped} item(s) had a label outside the given labels {list(labels)!r} and were ignored"]
