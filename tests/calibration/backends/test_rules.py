"""The pure span and extraction verdicts (no database)."""

import pytest

from calibration.backends import extraction_verdict, span_verdict


@pytest.mark.parametrize(
    "answer, expected, gold, verdict",
    [
        ("It is 30 days, and it does not auto-convert.", "30 days, and it does not auto-convert", None, "correct"),
        ("THIRTY DAYS", "thirty days", None, "correct"),
        ("A month; it will not roll over.", "30 days", None, "incorrect"),
        ("130 days", "30 days", None, "incorrect"),  # whole words only
        (
            "Trials run for thirty (30) days from activation.",
            None,
            "Trials run for thirty (30) days from activation",
            "correct",
        ),
        ("anything", None, None, "invalid"),
        ("anything", "", "  ", "invalid"),
    ],
)
def test_span_verdict(answer, expected, gold, verdict):
    assert span_verdict(answer=answer, expected=expected, gold_text=gold) == verdict


@pytest.mark.parametrize(
    "answer, expected, gold, verdict",
    [
        ("Thirty days.", "30 days, and it does not auto-convert", None, "correct"),
        ("The 48-hour window", "2 days", None, "correct"),
        ("3 days", "2 days", None, "incorrect"),
        ("on May 12, 2026", "2026-05-12", None, "correct"),
        ("on 12 May 2026", "2026-05-12", None, "correct"),
        ("on 13 May 2026", "2026-05-12", None, "incorrect"),
        ("it costs 1,200 dollars", "1200", None, "correct"),
        ("15 percent", "15%", None, "correct"),
        ("I do not know", "15%", None, "incorrect"),
        ("no idea", "nothing", None, "invalid"),
        ("twenty-one seats", None, "Plans include 21 seats.", "correct"),
    ],
)
def test_extraction_verdict(answer, expected, gold, verdict):
    assert extraction_verdict(answer=answer, expected=expected, gold_text=gold) == verdict
