"""A set of keys as one query parameter, for `__in` filters over thousands of values in one statement."""

import json
from collections.abc import Iterable

from django.db import connections
from django.db.models.expressions import RawSQL


def in_values(values: Iterable[str], *, using: str = "default") -> RawSQL:
    """A subquery yielding `values`, for `filter(field__in=in_values(...))`: the whole set travels as one
    parameter (a JSON array read by json_each on SQLite, a text array unnested on PostgreSQL), so the
    statement count does not grow with the set and no database's limit on bound parameters is reached,
    where `field__in=[...]` would need a statement per few hundred values."""
    keys = sorted(set(values))
    if connections[using].vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::text[])", (keys,))
    return RawSQL("SELECT value FROM json_each(%s)", (json.dumps(keys),))
