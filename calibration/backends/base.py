"""The one small interface every judge backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field

VERDICTS = ("correct", "incorrect", "invalid")


@dataclass(frozen=True)
class JudgeItem:
    """What a judge sees of one answer: the question, the gold passage, the expected answer, the answer."""

    run_id: str
    qid: str
    question: str
    answer: str
    expected: str | None = None
    gold_text: str | None = None
    stratum: str = ""


@dataclass(frozen=True)
class JudgeResult:
    """A judge's verdict ("correct" / "incorrect" / "invalid") and what it said to reach it."""

    verdict: str
    raw_output: str = ""
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reason: str = ""
    # The version's criteria: {name: value, or "invalid" when the judge gave none it may give}.
    values: dict[str, str] = field(default_factory=dict)
    # How a chat judge was asked for the reply's shape when it scores criteria: json_schema, json_object
    # or plain (criteria_format.MODES); "" otherwise.
    response_format: str = ""
    # What the server reports it ran: the chat completion's `model` and `system_fingerprint` ("" if absent).
    served_model: str = ""
    system_fingerprint: str = ""


class TransientJudgeError(Exception):
    """The judge could not answer now but may later (timeout, HTTP 429 or 5xx, connection refused)."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class PermanentJudgeError(Exception):
    """The judge will never answer this item as configured (HTTP 4xx other than 429, no imported verdict)."""


@dataclass
class Backend:
    """Base class: `judge(item) -> JudgeResult`, raising TransientJudgeError for what may heal."""

    model: str = ""
    prompt_template: str = ""
    params: dict = field(default_factory=dict)
    judge_version_id: int | None = None
    rubric: str = ""
    # The criteria the version scores beside its verdict: [{"name", "kind", "values"}] in name order.
    criteria: list[dict] = field(default_factory=list)

    name = "base"
    # Whether judge() may run in several threads at once (False for backends that read the database
    # or only compute: they run in the calling thread).
    concurrent = True

    def __post_init__(self):
        """Subclasses set up clients here (the dataclass __init__ calls it)."""

    def judge(self, item: JudgeItem) -> JudgeResult:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release connections; called once a chunk is done."""
