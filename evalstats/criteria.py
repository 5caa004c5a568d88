"""Criteria: the kinds of label beyond correct/incorrect, checked, and the pass rule that turns a value
into correct/incorrect for scoring. Pure: no Django, only the definition's own values.

A criterion has a kind and its values, in order where the kind is ordered:

* ``binary``: exactly ``correct``, ``incorrect`` (today's verdict); ``correct`` passes, no rule.
* ``categorical``: named values, unordered; the rule names the values that pass: ``in good|fine`` or
  ``== good``.
* ``ordinal``: ordered values (``1,2,3,4,5`` or ``poor,fair,good``), worst first; the rule compares by
  position in that order: ``>= 4``, ``> fair``, ``<= 2``, ``< 3``, ``== 5``, ``in 4|5``.

Without a rule a categorical or ordinal criterion has no pass/fail reading: it is scored by its own
statistics (weighted kappa, alpha, the mean difference), never silently turned into a binary one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

KINDS = ("binary", "categorical", "ordinal")
BINARY_VALUES = ("correct", "incorrect")
NAME_MAX = 100
VALUE_MAX = 100
VALUES_MAX = 100
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_RULE = re.compile(r"^\s*(>=|<=|==|>|<|in)\s*(.*?)\s*$", re.S)
_ORDERED_OPS = (">=", "<=", ">", "<")


class DefinitionError(ValueError):
    """A definition that cannot be used: ``problems`` are (field, message) pairs, each naming what is wrong."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))


@dataclass(frozen=True)
class Definition:
    """A checked criterion: its name, kind, values (in order for ordinal) and the values its rule passes
    (None: no pass rule)."""

    name: str
    kind: str
    values: tuple[str, ...]
    pass_rule: str
    passing: frozenset[str] | None

    def passes(self, value: str) -> bool:
        """Whether ``value`` reads as correct; a value outside the definition is a ValueError."""
        if value not in self.values:
            raise ValueError(f"{value!r} is not a value of {self.name!r} (one of {', '.join(self.values)})")
        if self.passing is None:
            raise ValueError(f"{self.name!r} has no pass rule: its values have no correct/incorrect reading")
        return value in self.passing

    def rank(self, value: str) -> int:
        """The value's position in the order (0 = worst), for ordinal statistics."""
        if self.kind != "ordinal":
            raise ValueError(f"{self.name!r} is {self.kind}: its values have no order")
        return self.values.index(value)


def _passing(kind: str, values: tuple[str, ...], rule: str) -> tuple[frozenset[str] | None, str | None]:
    """(the values the rule passes, or why the rule is refused)."""
    if kind == "binary":
        if rule:
            return None, "a binary criterion passes 'correct'; it takes no rule"
        return frozenset({"correct"}), None
    if not rule:
        return None, None
    match = _RULE.match(rule)
    if match is None:
        return None, f"{rule!r} is not a rule: write OP VALUE with OP one of >=, >, <=, <, ==, or 'in V1|V2'"
    op, operand = match.groups()
    named = [v.strip() for v in operand.split("|")] if op == "in" else [operand]
    unknown = [v for v in named if v not in values]
    if not operand or unknown:
        return None, f"{', '.join(map(repr, unknown or ['']))} is not one of the values ({', '.join(values)})"
    if op in ("in", "=="):
        return frozenset(named), None
    if kind != "ordinal":
        return None, f"{op} compares by order, and a {kind} criterion's values have none: use 'in V1|V2'"
    at = values.index(operand)
    picked = {
        ">=": values[at:],
        ">": values[at + 1 :],
        "<=": values[: at + 1],
        "<": values[:at],
    }[op]
    if not picked:
        return None, f"{rule!r} passes no value"
    return frozenset(picked), None


def definition(name: str, kind: str, values: Sequence[str] | None, pass_rule: str = "") -> Definition:
    """The criterion checked, or DefinitionError naming every problem (field: name, kind, values, pass)."""
    problems: list[tuple[str, str]] = []
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > NAME_MAX:
        problems.append(
            ("criterion", f"{str(name)[:40]!r} must be lower-case letters, digits, - and _ (at most {NAME_MAX})")
        )
    if kind not in KINDS:
        problems.append(("kind", f"{str(kind)[:40]!r} is not one of {', '.join(KINDS)}"))
    given = tuple(values) if values is not None else ()
    if kind == "binary" and not given:
        given = BINARY_VALUES
    cleaned = tuple(v.strip() if isinstance(v, str) else v for v in given)
    if any(not isinstance(v, str) or not v for v in cleaned):
        problems.append(("values", "every value must be a non-empty string"))
    elif kind == "binary" and cleaned != BINARY_VALUES:
        problems.append(("values", f"a binary criterion's values are exactly {','.join(BINARY_VALUES)}"))
    elif kind in ("categorical", "ordinal"):
        if len(cleaned) < 2:
            problems.append(("values", f"a {kind} criterion needs at least two values"))
        elif len(cleaned) > VALUES_MAX:
            problems.append(("values", f"at most {VALUES_MAX} values"))
        twice = sorted({v for v in cleaned if cleaned.count(v) > 1})
        if twice:
            problems.append(("values", f"given twice: {', '.join(twice)}"))
        if any(len(v) > VALUE_MAX or "|" in v or "," in v for v in cleaned):
            problems.append(("values", f"a value has at most {VALUE_MAX} characters and no ',' or '|'"))
    rule = (pass_rule or "").strip()
    passing = None
    if not problems:
        passing, why = _passing(kind, cleaned, rule)
        if why:
            problems.append(("pass", why))
    if problems:
        raise DefinitionError(problems)
    return Definition(name=name, kind=kind, values=cleaned, pass_rule=rule, passing=passing)


def in_agreement(d: Definition, values: Sequence[str], tolerance: int = 0) -> bool:
    """Whether the values given on one answer agree: all equal, or on an ordinal scale, ranks that differ
    by at most ``tolerance``. No values, or one, agree."""
    if len(set(values)) <= 1:
        return True
    if d.kind != "ordinal" or tolerance <= 0:
        return False
    ranks = [d.rank(v) for v in values]
    return max(ranks) - min(ranks) <= tolerance


def agreed_value(d: Definition, values: Sequence[str], tolerance: int = 0) -> str | None:
    """The final value of values that agree (``in_agreement``): the one value they share, or, for ordinal
    values within the tolerance but not equal, the lowest-ranked of them (the conservative reading: a
    3 and a 4 within one step stand as 3). None when they disagree or there are none."""
    if not values or not in_agreement(d, values, tolerance):
        return None
    if len(set(values)) == 1:
        return values[0]
    return min(values, key=d.rank)
