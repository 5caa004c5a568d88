"""Pass/fail decision for a judge from its agreement with human labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evalstats.agreement import Agreement

POLICIES = ("point", "lower_bound")


class Interval(Protocol):
    """What ``gate_decide`` reads off an interval object (``BootstrapCI``, ``StratifiedBootstrapCI``)."""

    @property
    def lo(self) -> float | None: ...

    @property
    def hi(self) -> float | None: ...


# An interval as gate_decide takes it: an object with lo and hi, or a (lo, hi) pair (a tuple or a list).
IntervalLike = Interval | Sequence[float | None]


@dataclass(frozen=True)
class GateDecision:
    """``status`` is "pass" or "fail"; ``reasons`` say why in words, one check a line."""

    status: str
    reasons: tuple[str, ...]
    policy: str
    threshold: float
    value: float | None  # the figure compared with the threshold (kappa or its lower bound)


def _pair(value: float, threshold: float) -> tuple[str, str]:
    """Value and threshold as text: the threshold as written (0.765 stays 0.765), and enough
    digits that a value just below it never prints as equal to it."""
    digits = 2
    while digits < 6 and float(f"{threshold:.{digits}f}") != threshold:
        digits += 1
    while digits < 6 and value != threshold and f"{value:.{digits}f}" == f"{threshold:.{digits}f}":
        digits += 1
    return f"{value:.{digits}f}", f"{threshold:.{digits}f}"


def _bounds(ci: Any) -> tuple[float | None, float | None] | None:
    """(lo, hi) from a BootstrapCI-like object, a pair, or None (an ``IntervalLike``; duck-typed, hence Any)."""
    if ci is None:
        return None
    if hasattr(ci, "lo"):
        return ci.lo, ci.hi
    lo, hi = ci
    return lo, hi


def gate_decide(
    agreement: Agreement,
    *,
    threshold: float = 0.7,
    policy: str = "point",
    min_n: int = 30,
    ci: IntervalLike | None = None,
) -> GateDecision:
    """Pass only if kappa is defined, n >= min_n and the policy's figure >= threshold.

    ``policy="point"`` compares kappa itself; ``policy="lower_bound"`` compares the lower end of
    the 95% interval: ``ci`` (a bootstrap interval or a (lo, hi) pair) when given, else the
    closed-form ``agreement.kappa_ci95``. Every check is reported, passed or failed.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    reasons: list[str] = []
    ok = True

    if agreement.n < min_n:
        ok = False
        reasons.append(f"n {agreement.n} below the minimum {min_n}")
    else:
        reasons.append(f"n {agreement.n} >= minimum {min_n}")

    value = None
    if agreement.kappa is None:
        ok = False
        reasons.append(f"kappa undefined: {agreement.reason}")
    elif policy == "point":
        value = agreement.kappa
        v, t = _pair(value, threshold)
        if value >= threshold:
            reasons.append(f"kappa {v} >= threshold {t}")
        else:
            ok = False
            reasons.append(f"kappa {v} below threshold {t}")
    else:
        given = _bounds(ci)
        source = "bootstrap" if given is not None else "closed-form"
        bounds = given if given is not None else agreement.kappa_ci95
        value = bounds[0] if bounds is not None else None
        if value is None:
            ok = False
            reasons.append(f"no {source} 95% interval for kappa, so its lower bound is unknown")
        else:
            v, t = _pair(value, threshold)
            passed = value >= threshold
            ok = ok and passed
            reasons.append(
                f"lower 95% bound of kappa ({source}) {v} {'>=' if passed else 'below'} "
                f"threshold {t} (kappa {agreement.kappa:.2f})"
            )
    return GateDecision(
        status="pass" if ok else "fail",
        reasons=tuple(reasons),
        policy=policy,
        threshold=threshold,
        value=value,
    )
