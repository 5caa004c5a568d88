"""The text side of production traffic, pure: the normalised form two askings of one question share, and
whether a rule (keyword, regex or metadata key=value) matches a question."""

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Casefolded, punctuation turned into spaces, whitespace collapsed: "What's  the fee?" and "what s the
    fee" are one question."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    stripped = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return _SPACE.sub(" ", stripped).strip()


def text_key(normalized: str) -> str:
    """The key a normalised text is unique by (its sha256, hex)."""
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def metadata_value(value: Any) -> str:
    """A metadata value as a rule compares it: text as it is, anything else as its JSON (true, 3, null)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class RuleLike(Protocol):
    kind: str
    pattern: str


R = TypeVar("R", bound=RuleLike)


def rule_matches(rule: RuleLike, text: str, normalized: str, metadata: dict) -> bool:
    """Whether one rule puts this question in its stratum. A keyword matches whole words of the normalised
    text; a regex is searched in the text as asked; metadata `key=value` compares the value as text."""
    if rule.kind == "keyword":
        return f" {normalize_text(rule.pattern)} " in f" {normalized} "
    if rule.kind == "regex":
        return re.search(rule.pattern, text) is not None
    key, _, value = rule.pattern.partition("=")
    return key in metadata and metadata_value(metadata[key]) == value


def first_match(rules: Iterable[R], text: str, normalized: str, metadata: dict) -> R | None:
    """The first rule that matches, `rules` being in precedence order (highest priority, then oldest)."""
    return next((r for r in rules if rule_matches(r, text, normalized, metadata)), None)
