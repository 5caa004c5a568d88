"""Reading rows fast: straight from the database cursor, for the hot paths (a million rows, or a statement every
request makes)."""

import contextvars
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Model, QuerySet

ModelT = TypeVar("ModelT", bound=Model)


def row_instance(model: type[ModelT], values: Sequence[object], using: str = DEFAULT_DB_ALIAS) -> ModelT:
    """A model instance from one row holding its concrete columns in field order, converted as the ORM
    converts what it reads (JSON, datetimes and booleans on SQLite): for the statements on every request,
    written as SQL because composing them with the ORM costs more CPU than the database spends on them."""
    wrapper = connections[using]
    attnames, converters = _row_converters(model, wrapper)
    converted = list(values)
    if len(converted) != len(attnames):
        raise ValueError(f"{model.__name__} has {len(attnames)} columns, the row {len(converted)}")
    for i, col, chain in converters:
        value = converted[i]
        for convert in chain:
            value = convert(value, col, wrapper)
        converted[i] = value
    return model.from_db(using, attnames, converted)


# Per connection (each thread has its own) and model: the column names and, for the columns that have any,
# the ORM's converters, looked up once rather than for every column of every row "next" and a submit read.
_CONVERTERS: weakref.WeakKeyDictionary[Any, dict[type, tuple[list[str], list[tuple[int, Any, list[Any]]]]]] = (
    weakref.WeakKeyDictionary()
)


def _row_converters(
    model: type[Model], wrapper: BaseDatabaseWrapper
) -> tuple[list[str], list[tuple[int, Any, list[Any]]]]:
    per_model = _CONVERTERS.setdefault(wrapper, {})
    found = per_model.get(model)
    if found is None:
        fields = model._meta.concrete_fields
        chains = []
        for i, field in enumerate(fields):
            col = field.get_col(model._meta.db_table)
            chain = wrapper.ops.get_db_converters(col) + col.get_db_converters(wrapper)
            if chain:
                chains.append((i, col, chain))
        found = per_model[model] = ([f.attname for f in fields], chains)
    return found


def columns_sql(model: type[Model], alias: str) -> str:
    """The select list of `model`'s concrete columns under `alias`, in the order `row_instance` reads them."""
    return ", ".join(f"{alias}.{f.column}" for f in model._meta.concrete_fields)


def row_get(model: type[ModelT], pk: int, using: str = DEFAULT_DB_ALIAS) -> ModelT | None:
    """The row of `model` with this primary key as an instance (`row_instance`), or None."""
    sql = f"SELECT {columns_sql(model, 't')} FROM {model._meta.db_table} t WHERE t.{model._meta.pk.column} = %s"
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [pk])
        row = cursor.fetchone()
    return None if row is None else row_instance(model, row, using)


def raw_chunks(qs: QuerySet[Any], *fields: str, chunk: int = 20_000) -> Iterator[list[tuple[Any, ...]]]:
    """Lists of rows of `qs.values_list(*fields)` straight from the database cursor: no model instances
    and no per-value converters (booleans come back as the backend gives them: 0/1 on SQLite). For the
    hot paths over a million answers, where Django's per-row conversion costs more than the query."""
    sql, params = qs.values_list(*fields).query.sql_with_params()
    with connections[qs.db].cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk):
            yield rows


def raw_values(qs: QuerySet[Any], *fields: str, chunk: int = 20_000) -> Iterator[tuple[Any, ...]]:
    """The rows of `raw_chunks` one by one."""
    for rows in raw_chunks(qs, *fields, chunk=chunk):
        yield from rows


def in_id_chunks(qs: QuerySet[Any], fields: tuple[str, ...] = (), chunk: int = 2000) -> Iterator[Any]:
    """The objects of `qs` (or, given `fields`, the tuples of `qs.values_list(*fields)`), in its order, read
    a chunk at a time by one ordinary query each, for a stream that may never be read to the end (an
    export a client hangs up on, a test that checks the status).

    `.iterator()` would hold a server-side cursor on PostgreSQL between chunks: if nobody closes the
    stream, the garbage collector closes the cursor at a random later moment, which aborts whatever
    transaction the connection is in by then (or deadlocks the connection, collecting inside a psycopg
    call). Here nothing stays open between chunks: the ids first (one column), then each chunk by id."""
    ids = list(dict.fromkeys(qs.values_list("pk", flat=True)))
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        rows = qs.order_by().filter(pk__in=part)
        found: dict[Any, Any] = (
            {row[0]: row[1:] for row in rows.values_list("pk", *fields)} if fields else {obj.pk: obj for obj in rows}
        )
        yield from (found[pk] for pk in part if pk in found)


# ASCII "unit separator": never part of a qid or a stratum name that anyone types.
SEPARATOR = _SEP = "\x1f"


def split_joined(count: int, joined: str | None) -> list[str] | None:
    """The `count` values a database joined with SEPARATOR (STRING_AGG / GROUP_CONCAT; NULL when there were
    none), or None when a value held the separator itself and the caller must read the rows instead."""
    if not count:
        return []
    parts = (joined or "").split(_SEP)
    return parts if len(parts) == count else None


def column_strings(qs: QuerySet[Any], field: str) -> list[str]:
    """Every value of one text column of `qs` (in no particular order), in one round trip: the
    database joins the values (GROUP_CONCAT on SQLite, STRING_AGG on PostgreSQL) and Python splits
    one string, instead of building a row tuple per value. About twice as fast as `raw_values` over
    a million rows.

    The count comes back with the string, so a value holding the separator cannot go unnoticed: the
    parts would not add up, and the rows are then read one by one instead."""
    return column_strings_by(qs, None, field).get(None, [])


def column_strings_by(qs: QuerySet[Any], key: str | None, field: str) -> dict[Any, list[str]]:
    """`column_strings` per value of the column `key`: {key value: [values of `field`]}, one round
    trip for all the groups (key None: a single group, None)."""
    connection = connections[qs.db]
    join = "STRING_AGG" if connection.vendor == "postgresql" else "GROUP_CONCAT"
    columns = {"_v": F(field), **({"_k": F(key)} if key else {})}
    inner, params = qs.order_by().values(**columns).query.sql_with_params()
    group = ('"_k"', ' GROUP BY "_k"') if key else ("NULL", "")
    sql = f'SELECT {group[0]}, COUNT(*), {join}("_v", %s) FROM ({inner}) AS "_values"{group[1]}'
    out: dict[Any, list[str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, (_SEP, *params))
        for k, count, joined in cursor.fetchall():
            if not count:
                continue
            parts = joined.split(_SEP)
            if len(parts) != count:  # a value held the separator: read the rows instead
                out = {}
                for k_, v in raw_values(qs, key or field, field):
                    out.setdefault(k_ if key else None, []).append(v)
                return out
            out[k] = parts
    return out


def column_string_pairs(qs: QuerySet[Any], first: str, second: str) -> dict[str, str]:
    """{value of `first`: value of `second`} over the rows of `qs` (two text columns, `first` unique), in one
    round trip: the database joins every row's two values, and the rows, with SEPARATOR into one string
    that Python splits once, instead of building a row tuple per row (a dataset diff's 100,000 modified
    records at a million questions). A value holding the separator makes the parts miscount: the rows are
    then read one by one instead."""
    connection = connections[qs.db]
    join = "STRING_AGG" if connection.vendor == "postgresql" else "GROUP_CONCAT"
    inner, params = qs.order_by().values(_a=F(first), _b=F(second)).query.sql_with_params()
    # || rather than a second aggregate: the two columns stay in step whatever order the rows come in.
    sql = f'SELECT COUNT(*), {join}("_a" || %s || "_b", %s) FROM ({inner}) AS "_values"'
    with connection.cursor() as cursor:
        cursor.execute(sql, (_SEP, _SEP, *params))
        count, joined = cursor.fetchone()
    parts = split_joined(2 * count, joined)
    if parts is None:
        return dict(raw_values(qs, first, second))
    return dict(zip(parts[::2], parts[1::2], strict=True))


def side_by_side(*calls: Callable[[], Any]) -> list[Any]:
    """The results of these read-only calls, in order: the first on this thread, each other one in a thread
    of its own on a connection of its own, so the database works on one while Python works on another (a
    dataset diff grades two runs and partitions two versions: three statements over a million rows each,
    which need not wait in line).

    One after the other on this thread instead when that would read something else: inside a transaction (an
    `atomic` block, as in every test) another connection would not see what it wrote, nor read its snapshot;
    and an in-memory SQLite database is one connection's alone. Outside a transaction each statement reads
    what was committed when it starts, one after the other or side by side alike. Each thread runs in a copy
    of this one's context (evalapp.routers' replica switch) and closes its connections when done."""
    if len(calls) < 2 or not _own_connections_safe():
        return [call() for call in calls]
    with ThreadPoolExecutor(max_workers=len(calls) - 1, thread_name_prefix="side-by-side") as pool:
        futures = [pool.submit(_on_own_connection, contextvars.copy_context(), call) for call in calls[1:]]
        first = calls[0]()
        return [first, *(future.result() for future in futures)]


def _own_connections_safe() -> bool:
    """PostgreSQL outside a transaction. SQLite reads on the same two cores as Python (it is a library in
    the process, not a server), so side by side gained nothing there in the 10^6 bench; and an in-memory
    database is one connection's alone."""
    for alias in connections:
        connection = connections[alias]
        if connection.in_atomic_block or connection.vendor != "postgresql":
            return False
    return True


def _on_own_connection(context: contextvars.Context, call: Callable[[], Any]) -> Any:
    try:
        return context.run(call)
    finally:
        connections.close_all()
