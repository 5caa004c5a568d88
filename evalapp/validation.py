"""Bounds on the numbers and text users give, in one place so the API, the pages and the commands agree.

Each check returns a Problem naming the field (or None); `raise_problems` turns the ones found into
the one domain error. Serializers and forms state the same bounds so the OpenAPI schema shows them.
"""

import math

from evalapp.errors import Problem, ServiceError

# numpy's default_rng and random.Random take any non-negative int; 2**32 - 1 is the range every seeded
# tool agrees on (numpy's legacy seed), and what a script can pass anywhere.
SEED_MAX = 2**32 - 1
# A calibration sample stores its seed in a 32-bit column.
STORED_SEED_MAX = 2**31 - 1
ITERS_MAX = 100_000
# Active seconds on one label or one edit: a day is already beyond any honest session.
ACTIVE_SECONDS_MAX = 86_400
NAME_MAX = 200
TEXT_MAX = 10_000
RUBRIC_MAX = 50_000
SAMPLE_MAX = 1_000_000
# Row ids are 64-bit signed integers in both databases.
ID_MAX = 2**63 - 1


def whole_number_problem(value: object, field: str, *, minimum: int, maximum: int) -> Problem | None:
    """A problem unless value is an int (not a bool) in minimum..maximum."""
    if not isinstance(value, int) or isinstance(value, bool):
        return Problem(f"must be a whole number from {minimum} to {maximum}, not {_show(value)}", field=field)
    if not minimum <= value <= maximum:
        return Problem(f"must be from {minimum} to {maximum}, not {_show(value)}", field=field)
    return None


def seed_problem(value: object, field: str = "seed", *, maximum: int = SEED_MAX) -> Problem | None:
    """A problem unless value is a seed numpy and random both take: 0..maximum."""
    return whole_number_problem(value, field, minimum=0, maximum=maximum)


def iters_problem(value: object, field: str = "iters", *, minimum: int = 1, maximum: int = ITERS_MAX) -> Problem | None:
    """A problem unless value is a bootstrap replicate count in minimum..maximum."""
    return whole_number_problem(value, field, minimum=minimum, maximum=maximum)


def seconds_problem(
    value: object, field: str = "active_seconds", *, maximum: float = ACTIVE_SECONDS_MAX
) -> Problem | None:
    """A problem unless value is a finite number of seconds in 0..maximum (None is no figure, allowed)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Problem(f"must be a number of seconds from 0 to {maximum:g}, not {_show(value)}", field=field)
    if not math.isfinite(value) or not 0 <= value <= maximum:
        return Problem(f"must be a number of seconds from 0 to {maximum:g}, not {_show(value)}", field=field)
    return None


def text_problem(value: object, field: str, *, max_length: int, required: bool = False) -> Problem | None:
    """A problem unless value is a string of at most max_length characters that the database can store
    (no NUL, no unpaired surrogate); with required, a non-blank one."""
    if not isinstance(value, str):
        return Problem("must be a string", field=field)
    if required and not value.strip():
        return Problem("must be a non-empty string", field=field)
    if len(value) > max_length:
        return Problem(f"is {len(value)} characters long; at most {max_length} are allowed", field=field)
    if "\x00" in value:
        return Problem("contains a NUL character, which cannot be stored", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return Problem("contains an unpaired surrogate, which is not valid Unicode", field=field)
    return None


def raise_problems(message: str, *problems: Problem | None) -> None:
    """Raise ServiceError(message, problems) when any check found something; nothing is written before."""
    found = [p for p in problems if p is not None]
    if found:
        raise ServiceError(message, found)


def as_id(value: object) -> int | None:
    """A row id from a URL or an argument, or None when it cannot be one (not a whole number, or beyond
    64 bits, which SQLite refuses to even compare)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        number = int(value)
    else:
        return None
    return number if 0 <= number <= ID_MAX else None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:30] + "…"
