"""Rule-based verdicts: `span` (normalised containment) and `extraction` (typed values compared).

Plain functions with no Django import, so comparisons and the judge backends share one
definition of "correct". Each returns "correct", "incorrect" or "invalid"; "invalid" means the rule
cannot grade this question (no reference to compare with), never a silent "incorrect".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

CORRECT, INCORRECT, INVALID = "correct", "incorrect", "invalid"

_PUNCT = re.compile(r"[^\w\s%.]|(?<!\d)\.|\.(?!\d)", re.UNICODE)


def normalise(text: str | None) -> str:
    """Casefolded NFKC text with punctuation removed (decimal points kept) and whitespace collapsed."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("\u2019", "'").replace("'", "")
    text = _PUNCT.sub(" ", text)
    return " ".join(text.split())


def _contains(haystack: str, needle: str) -> bool:
    """Whole-word containment of normalised needle in normalised haystack."""
    if not needle:
        return False
    return re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", haystack) is not None


def span_verdict(*, answer: str | None, expected: str | None, gold_text: str | None = None) -> str:
    """`correct` when the answer contains the expected answer (else the gold passage), word for word
    after normalisation; `invalid` when the question has neither to compare with."""
    reference = normalise(expected) or normalise(gold_text)
    if not reference:
        return INVALID
    said = normalise(answer)
    if _contains(said, reference):
        return CORRECT
    if normalise(expected) and normalise(gold_text) and _contains(said, normalise(gold_text)):
        return CORRECT
    return INCORRECT


# --- extraction -------------------------------------------------------------------------------

_WORD_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "a": 1,
    "an": 1,
    "a single": 1,
    "single": 1,
    "half a": 0.5,
    "a couple of": 2,
    "couple of": 2,
}
_UNIT_SECONDS = {
    "second": 1,
    "sec": 1,
    "minute": 60,
    "min": 60,
    "hour": 3600,
    "hr": 3600,
    "day": 86400,
    "business day": 86400,
    "working day": 86400,
    "week": 7 * 86400,
    "fortnight": 14 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
    "yr": 365 * 86400,
}
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_WORDS = "|".join(sorted((re.escape(w) for w in _WORD_NUMBERS), key=len, reverse=True))
_QTY = rf"(?P<num>{_NUM})|(?P<word>(?:{_WORDS})(?:[ -](?:one|two|three|four|five|six|seven|eight|nine))?)"
_UNITS = "|".join(sorted((re.escape(u) for u in _UNIT_SECONDS), key=len, reverse=True))
_DURATION = re.compile(rf"(?<!\w)(?:{_QTY})\s*(?:\(\s*(?P<paren>{_NUM})\s*\)\s*)?-?\s*(?P<unit>{_UNITS})s?(?!\w)", re.I)
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DMY = re.compile(rf"(?<!\w)(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s+(\d{{4}})(?!\d)", re.I)
_MDY = re.compile(rf"(?<!\w)({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I)
_NUMBER = re.compile(rf"(?<![\w.])(?:{_QTY})(?P<pct>\s*(?:%|percent|per cent))?(?![\w])", re.I)


def _word_value(word: str) -> float:
    word = word.lower().replace("-", " ")
    if word in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[word])
    head, _, tail = word.rpartition(" ")
    return float(_WORD_NUMBERS.get(head, 0) + _WORD_NUMBERS.get(tail, 0))


def _qty(match: re.Match[str]) -> float:
    if match.group("num"):
        return float(match.group("num").replace(",", ""))
    return _word_value(match.group("word"))


def extract_durations(text: str | None) -> list[float]:
    """Every duration in the text, in seconds ("thirty (30) days", "2 weeks", "48-hour")."""
    out = []
    for m in _DURATION.finditer(text or ""):
        value = float(m.group("paren").replace(",", "")) if m.group("paren") else _qty(m)
        out.append(value * _UNIT_SECONDS[m.group("unit").lower()])
    return out


def extract_dates(text: str | None) -> list[date]:
    """Every calendar date in the text (ISO, "12 May 2026", "May 12, 2026")."""
    out = []
    text = text or ""
    for y, mo, d in _ISO_DATE.findall(text):
        out.extend(_date(int(y), int(mo), int(d)))
    for d, mo, y in _DMY.findall(text):
        out.extend(_date(int(y), _MONTHS[mo.lower()], int(d)))
    for mo, d, y in _MDY.findall(text):
        out.extend(_date(int(y), _MONTHS[mo.lower()], int(d)))
    return out


def _date(y: int, m: int, d: int) -> list[date]:
    try:
        return [date(y, m, d)]
    except ValueError:
        return []


def extract_numbers(text: str | None) -> list[float]:
    """Every number in the text, digits or words; percentages kept as their number (15% -> 15)."""
    text = _ISO_DATE.sub(" ", text or "")
    out = []
    for m in _NUMBER.finditer(text):
        if m.group("word") and m.group("word").lower() in ("a", "an", "single", "a single"):
            continue  # articles are not quantities unless they carry a unit (durations)
        out.append(_qty(m))
    return out


@dataclass(frozen=True)
class Extracted:
    """What the extraction rule found in a text: its kind ("duration", "date", "number") and values."""

    kind: str | None
    values: tuple[float | date, ...]  # floats (durations in seconds, numbers) or dates, as kind says


def extract_value(text: str | None) -> Extracted:
    """The most specific typed value in the text: a duration, else a date, else a number."""
    for kind, fn in (("duration", extract_durations), ("date", extract_dates), ("number", extract_numbers)):
        values: Sequence[float | date] = fn(text)
        if values:
            return Extracted(kind, tuple(values))
    return Extracted(None, ())


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def extraction_verdict(*, answer: str | None, expected: str | None, gold_text: str | None = None) -> str:
    """`correct` when the answer states the same duration, date or number as the expected answer
    (else the gold passage); `invalid` when the reference holds no such value."""
    reference = extract_value(expected)
    if reference.kind is None:
        reference = extract_value(gold_text)
    if reference.kind is None:
        return INVALID
    # Typed Any: the rule named by reference.kind gives dates for "date" and floats otherwise, and the
    # comparisons below keep to that kind, which mypy cannot follow through the name.
    rules: dict[str, Callable[[str | None], Sequence[Any]]] = {
        "duration": extract_durations,
        "date": extract_dates,
        "number": extract_numbers,
    }
    fn = rules[reference.kind]
    said = fn(answer)
    target: Any = reference.values[0]
    if reference.kind == "date":
        return CORRECT if target in said else INCORRECT
    return CORRECT if any(_close(target, v) for v in said) else INCORRECT
