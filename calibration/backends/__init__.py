"""Judge backends behind one interface, and the pure rule verdicts other apps import.

`span_verdict` and `extraction_verdict` are plain functions (no Django) returning
"correct" / "incorrect" / "invalid".
"""

from calibration.backends.base import (
    Backend,
    JudgeItem,
    JudgeResult,
    PermanentJudgeError,
    TransientJudgeError,
)
from calibration.backends.openai import OpenAIBackend
from calibration.backends.replay import ReplayBackend
from calibration.backends.rules import ExtractionBackend, SpanBackend
from evalstats.verdicts import extraction_verdict, normalise, span_verdict

BACKENDS = ("span", "extraction", "openai", "replay")


def backend_for(
    name: str,
    *,
    model: str = "",
    prompt_template: str = "",
    params: dict | None = None,
    judge_version_id: int | None = None,
    rubric: str = "",
    criteria: list[dict] | None = None,
) -> Backend:
    """A backend instance by name, configured as a judge version is."""
    classes = {"span": SpanBackend, "extraction": ExtractionBackend, "openai": OpenAIBackend, "replay": ReplayBackend}
    if name not in classes:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
    return classes[name](
        model=model,
        prompt_template=prompt_template,
        params=dict(params or {}),
        judge_version_id=judge_version_id,
        rubric=rubric,
        criteria=list(criteria or []),
    )


__all__ = [
    "BACKENDS",
    "Backend",
    "JudgeItem",
    "JudgeResult",
    "PermanentJudgeError",
    "TransientJudgeError",
    "backend_for",
    "extraction_verdict",
    "normalise",
    "span_verdict",
]
