"""Crossed runs: which factor a comparison's movement belongs to.

Two runs that differ in exactly one pinned field (model snapshot, prompt, evaluator, harness, index) and
answer the same questions of one dataset version are a one-factor experiment: the paired difference is that
factor's effect (with the run-to-run noise the band shows). With two or more fields changed, or with the
population changed under them, no single factor can be credited, and the comparison says which and why.
"""

from __future__ import annotations

from annotation.models import Run
from annotation.models.runs import PINNED


def attribution(a: Run, b: Run, *, n: int, dropped: int, diff_points: float, ci95: tuple | list) -> dict:
    """{"attributed", "factor", "a", "b", "factors", "diff_points", "ci95", "words"}: `factors` every pinned
    field in which B differs from A (PINNED order); `factor` the one field when there is exactly one (else
    None); `attributed` only when, besides, both runs were scored on the same dataset hash and no question was
    dropped from the pairing."""
    factors = [k for k in PINNED if getattr(a, k) != getattr(b, k)]
    out: dict = {
        "attributed": False,
        "factor": None,
        "a": None,
        "b": None,
        "factors": factors,
        "diff_points": diff_points,
        "ci95": list(ci95) if ci95 is not None else None,
    }
    lo_hi = f" [{ci95[0]:.1f}, {ci95[1]:.1f}]" if ci95 is not None else ""
    if not factors:
        out["words"] = (
            "No pinned field differs: the runs are repeats of one configuration, and the movement is run-to-run noise."
        )
        return out
    if len(factors) > 1:
        out["words"] = (
            f"{len(factors)} pinned fields differ ({', '.join(factors)}): the movement cannot be put down to one of "
            f"them; compare runs that differ in one."
        )
        return out
    field = factors[0]
    out.update(factor=field, a=getattr(a, field), b=getattr(b, field))
    said = f"Only {field} differs ({out['a'] or 'unrecorded'} → {out['b'] or 'unrecorded'})"
    if a.dataset_hash != b.dataset_hash or not a.dataset_hash:
        out["words"] = (
            f"{said}, but the runs were scored on different dataset versions: the movement mixes the {field} "
            f"change with the change of labelled set."
        )
    elif dropped:
        out["words"] = (
            f"{said}, but the questions compared are not the same ({dropped} dropped from the pairing): the "
            f"movement mixes the {field} change with the change of population."
        )
    else:
        out["attributed"] = True
        out["words"] = (
            f"{said} and both runs answer the same {n} questions of one dataset version, so the movement, "
            f"{diff_points:+.1f} points{lo_hi}, is the {field} change's."
        )
    return out
