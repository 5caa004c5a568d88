"""Relabel drift: do blind re-labels of old examples disagree with the originals in one direction?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalstats._encode import as_column


@dataclass(frozen=True)
class Drift:
    """Disagreements between original and blind re-labels, and a sign test of their direction.

    ``to_positive`` counts originals that were not ``positive`` and became it, ``to_negative`` the
    reverse; ``other`` counts changes between two non-positive labels (not part of the test).
    ``p_value`` is the exact two-sided binomial (sign) test of to_positive against
    to_positive + to_negative at p = 0.5; ``verdict`` is "drift" when p_value < alpha.
    """

    n: int
    disagreements: int
    to_positive: int
    to_negative: int
    other: int
    p_value: float
    alpha: float
    verdict: str
    words: str


def relabel_drift(
    old_labels: npt.ArrayLike, new_labels: npt.ArrayLike, *, alpha: float = 0.05, positive: str = "correct"
) -> Drift:
    """Test whether re-labelling moved labels systematically toward or away from ``positive``.

    The sign test looks at direction only: many disagreements split evenly are noise in the
    labels, not drift in the standard, and the words report the disagreement rate either way.
    """
    old = as_column(old_labels, "old_labels")
    new = as_column(new_labels, "new_labels")
    if old.shape[0] != new.shape[0]:
        raise ValueError(f"old_labels and new_labels must have the same length, got {old.shape[0]} and {new.shape[0]}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    n = int(old.shape[0])
    changed = old != new
    was_pos = old == positive
    is_pos = new == positive
    disagreements = int(np.count_nonzero(changed))
    to_positive = int(np.count_nonzero(changed & ~was_pos & is_pos))
    to_negative = int(np.count_nonzero(changed & was_pos & ~is_pos))
    other = disagreements - to_positive - to_negative
    directed = to_positive + to_negative
    # Imported here: scipy.stats takes half a second to import and only this function needs it.
    from scipy.stats import binomtest

    p_value = 1.0 if directed == 0 else float(binomtest(to_positive, directed, 0.5).pvalue)
    verdict = "drift" if p_value < alpha else "accept"

    rate = f"{disagreements} of {n} re-labels differ" + (f" ({100 * disagreements / n:.1f}%)" if n else "")
    direction = f"{to_positive} toward {positive!r}, {to_negative} away from it"
    if verdict == "drift":
        words = (
            f"{rate}; {direction}. The changes lean one way more than chance allows (exact "
            f"two-sided sign test p = {p_value:.3g} < {alpha}): the labelling standard has drifted."
        )
    else:
        words = (
            f"{rate}; {direction}. No systematic direction (exact two-sided sign test p = {p_value:.3g} >= {alpha})."
        )
    return Drift(
        n=n,
        disagreements=disagreements,
        to_positive=to_positive,
        to_negative=to_negative,
        other=other,
        p_value=p_value,
        alpha=alpha,
        verdict=verdict,
        words=words,
    )
