"""A set of keys as one query parameter, for `__in` filters over thousands of values in one statement."""

import json
from collections.abc import Iterable

from django.db import connections
from django.db.models.expressions import RawSQL


def _one_parameter(keys: list[str] | list[int], sql_type: str, using: str) -> RawSQL:
    if connections[using].vendor == "postgresql":
        if sql_type == "text":
            # One JSON text, written by json.dumps in C: psycopg's array dumper quotes value by value in
            # Python (at 100,000 hashes, most of a second).
            return RawSQL("SELECT json_array_elements_text(%s::json)", (json.dumps(keys),))
        return RawSQL(f"SELECT unnest(%s::{sql_type}[])", (keys,))
    return RawSQL("SELECT value FROM json_each(%s)", (json.dumps(keys),))


def in_values(values: Iterable[str], *, using: str = "default") -> RawSQL:
    """A subquery yielding `values`, for `filter(field__in=in_values(...))`: the whole set travels as one
    parameter (a JSON array read by json_each on SQLite, a text array unnested on PostgreSQL), so the
    statement count does not grow with the set and no database's limit on bound parameters is reached,
    where `field__in=[...]` would need a statement per few hundred values."""
    return _one_parameter(sorted(set(values)), "text", using)


def ids_in(ids: Iterable[int], *, using: str = "default") -> RawSQL:
    """`in_values` for integer ids (`filter(pk__in=ids_in(ids))`): one parameter however many ids, so
    neither SQLite's parameter limit nor Django's compiling of a long IN list applies."""
    return _one_parameter(list(ids), "bigint", using)
