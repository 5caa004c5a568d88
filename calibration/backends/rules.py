"""`span` and `extraction` as backends: the rules in rules.py behind the judge interface."""

import time

from calibration.backends.base import Backend, JudgeItem, JudgeResult
from evalstats.verdicts import extraction_verdict, span_verdict


class SpanBackend(Backend):
    name = "span"
    concurrent = False

    def judge(self, item: JudgeItem) -> JudgeResult:
        start = time.perf_counter()
        verdict = span_verdict(answer=item.answer, expected=item.expected, gold_text=item.gold_text)
        return JudgeResult(
            verdict=verdict,
            raw_output=f"span: {verdict}",
            latency_ms=(time.perf_counter() - start) * 1000,
            reason="" if verdict != "invalid" else "no expected answer or gold passage to compare with",
        )


class ExtractionBackend(Backend):
    name = "extraction"
    concurrent = False

    def judge(self, item: JudgeItem) -> JudgeResult:
        start = time.perf_counter()
        verdict = extraction_verdict(answer=item.answer, expected=item.expected, gold_text=item.gold_text)
        return JudgeResult(
            verdict=verdict,
            raw_output=f"extraction: {verdict}",
            latency_ms=(time.perf_counter() - start) * 1000,
            reason="" if verdict != "invalid" else "no number, date or duration in the reference",
        )
