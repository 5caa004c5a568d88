"""Writing many rows fast, for the paths that write a row per line of a large file: plain tuples in, as few
statements as the backend allows out.

Django's `bulk_create` and `bulk_update` build a model instance per row and convert every value through
its field, which costs more than the database does at a hundred thousand rows (`bulk_update` also
writes a CASE over every row of a batch, and on SQLite batches of 999 parameters). Here the caller hands
over values in the Python types the driver takes (ints, strings, None, aware datetimes); only datetimes
are adapted for SQLite, the way Django stores them there (naive UTC text). No `save()`, signal or field
default runs: the caller gives every column the row needs.

  insert_rows      multi-row INSERTs (SQLite: as many rows as its parameter limit allows a statement);
                   on PostgreSQL, more than COPY_MIN rows (or a stream) go through COPY FROM STDIN, many
                   times faster than INSERTs with values bound on the client (as Django binds them); rows
                   may be a generator, read a batch at a time
  RowWriter        insert_rows on a thread of its own while the caller prepares the next batch (an import
                   reads and checks lines while the database writes the lines before), on the caller's
                   connection and in its transaction
  update_rows      per-row values by primary key: executemany on SQLite, UPDATE … FROM unnest(arrays)
                   on PostgreSQL (a statement per UNNEST_BATCH rows)
  update_ids       the same values on any number of rows named by id, in one statement (the ids go as one
                   JSON or array parameter, so no parameter limit applies)

Every statement is recorded in Django's query log as an ordinary one would be (COPY included), so tests
that count statements count these.

Hand-written rather than a library: the bulk-loading packages for Django (django-bulk-load,
django-postgres-copy) speak PostgreSQL's COPY only, and the project runs on SQLite too.
"""

import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from json.encoder import c_encode_basestring_ascii, c_make_encoder  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper

COPY_MIN = 1000
UNNEST_BATCH = 5000


if TYPE_CHECKING:
    Field = models.Field[Any, Any]
else:
    Field = models.Field
Adapter = Callable[[Any], Any]
# json.dumps with every default, as the C encoder json.dumps itself builds on each call (ASCII escapes, ", "
# and ": ", keys in their order, NaN allowed), built once: per value only the encoding runs. It does not check
# for circular references (markers None), which a value parsed from JSON cannot hold.
_encode_chunks = c_make_encoder(
    None, json.JSONEncoder().default, c_encode_basestring_ascii, None, ": ", ", ", False, False, True
)


def _fields(model: type[models.Model], names: Sequence[str]) -> list[Field]:
    out = []
    for name in names:
        field = model._meta.get_field(name)
        assert isinstance(field, models.Field), name
        out.append(field)
    return out


def _adapters(fields: list[Field], connection: BaseDatabaseWrapper) -> list[tuple[int, Adapter]]:
    if connection.vendor != "sqlite":
        return []
    return [
        (i, connection.ops.adapt_datetimefield_value)
        for i, f in enumerate(fields)
        if isinstance(f, models.DateTimeField)
    ]


def _adapted(rows: Sequence[Sequence[Any]], adapters: list[tuple[int, Adapter]]) -> Sequence[Sequence[Any]]:
    if not adapters:
        return rows
    # Times repeat (one import's clock time on every event), and adapting one costs a time-zone conversion.
    seen: dict[Any, Any] = {None: None}
    out = []
    for row in rows:
        values = list(row)
        for i, adapt in adapters:
            value = values[i]
            if value not in seen:
                seen[value] = adapt(value)
            values[i] = seen[value]
        out.append(values)
    return out


def _column(connection: BaseDatabaseWrapper, field: Field) -> str:
    assert field.column is not None
    return connection.ops.quote_name(field.column)


def _max_params(connection: BaseDatabaseWrapper) -> int:
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        try:
            return int(connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
        except AttributeError:  # Python before 3.11: the limit SQLite has had by default since 3.32
            return 32766
    return 65535


def _logged(connection: BaseDatabaseWrapper, sql: str, started: float) -> None:
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})


def json_text(value: Any) -> str:
    """A JSON column's value as the text Django's JSONField writes (json.dumps with its defaults), for
    `insert_rows`, so a row written either way is stored alike."""
    kind = type(value)
    if kind is list or kind is dict:
        if not value:
            return "[]" if kind is list else "{}"
        return "".join(_encode_chunks(value, 0))
    return json.dumps(value)


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]], *, using: str = "default"
) -> int:
    """INSERT every row (values in `fields` order; foreign keys by their field or `_id` names; JSON columns
    as `json_text`). Returns how many. `rows` may be a generator: it is read once, a batch at a time, so
    a million rows are never all held. Run it inside a transaction: a failure part-way leaves rows behind
    otherwise."""
    return _insert_rows(connections[using], model, fields, rows)


def _insert_rows(
    connection: BaseDatabaseWrapper, model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    model_fields = _fields(model, fields)
    columns = [_column(connection, f) for f in model_fields]
    table = connection.ops.quote_name(model._meta.db_table)
    # COPY costs a round trip more than one INSERT: worth it from COPY_MIN rows, or for a stream of unknown
    # length (an import's rows).
    if connection.vendor == "postgresql" and (not isinstance(rows, Sequence) or len(rows) > COPY_MIN):
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        started = time.monotonic()
        written = 0
        with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
                written += 1
        _logged(connection, f"{sql} ({written} rows)", started)
        return written
    adapters = _adapters(model_fields, connection)
    width = len(columns)
    sqlite = connection.vendor == "sqlite"
    one = f"({', '.join(['?' if sqlite else '%s'] * width)})"
    batch = max(1, min(1000, _max_params(connection) // width))
    # Times repeat (one import's clock time on every event), and adapting one costs a time-zone conversion.
    seen: dict[Any, Any] = {None: None}
    written = 0
    stream = iter(rows)
    with connection.cursor() as cursor:
        while part := list(islice(stream, batch)):
            params = [v for row in part for v in row]
            for i, adapt in adapters:
                column = params[i::width]
                for value in column:
                    if value not in seen:
                        seen[value] = adapt(value)
                params[i::width] = [seen[value] for value in column]
            sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * len(part))}"
            if sqlite:
                # Straight to sqlite3 with its own placeholders: Django's wrapper would rewrite each %s of a
                # statement of thousands by a regular expression first. Errors are Django's, as through it.
                started = time.monotonic()
                with connection.wrap_database_errors:
                    sqlite3.Cursor.execute(cursor.cursor, sql, params)
                _logged(connection, sql, started)
            else:
                cursor.execute(sql, params)
            written += len(part)
    return written


class RowWriter:
    """`insert_rows` on a thread of its own, behind the caller: while the database writes one batch, the
    caller reads and checks the next (an import's parsing is Python, holding the interpreter; SQLite's and
    psycopg's writing lets go of it, so on two cores the two overlap). The batches go through a queue of
    `depth`: held in memory at once are the batch being written, at most `depth` waiting, and the one the
    caller is building.

    Used as a context manager inside the caller's transaction, on the caller's connection (shared with the
    thread for the duration; the caller must not use the connection until the block ends). The block's end
    waits for every batch to be written. A failed write is raised in the caller at its next `put` or at
    the block's end; after it, later batches are dropped. When the block ends with an exception, the
    batches not yet written are dropped and the thread is waited for before the exception goes on, so
    the transaction rolls back with no write in flight."""

    def __init__(self, model: type[models.Model], fields: Sequence[str], *, using: str = "default", depth: int = 1):
        self.connection = connections[using]
        self.model, self.fields = model, fields
        self.written = 0
        self._queue: queue.Queue[Sequence[Sequence[Any]] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._stop = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "RowWriter":
        self.connection.ensure_connection()
        self.connection.inc_thread_sharing()
        self._thread = threading.Thread(target=self._write, name="evalapp-row-writer", daemon=True)
        self._thread.start()
        return self

    def put(self, rows: Sequence[Sequence[Any]]) -> None:
        """Queue one batch (the writer keeps the list: hand over a new one each time)."""
        if self._error is not None:
            raise self._error
        if rows:
            self._queue.put(rows)

    def _write(self) -> None:
        while (rows := self._queue.get()) is not None:
            if self._error is None and not self._stop:
                try:
                    self.written += _insert_rows(self.connection, self.model, self.fields, rows)
                except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                    self._error = exc

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        self._stop = exc is not None
        self._queue.put(None)
        assert self._thread is not None
        self._thread.join()
        self.connection.dec_thread_sharing()
        if exc is None and self._error is not None:
            raise self._error


def update_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]], *, using: str = "default"
) -> int:
    """UPDATE `fields` of each row by primary key; a row is its values in `fields` order, then the primary
    key. Returns how many rows were given."""
    if not rows:
        return 0
    connection = connections[using]
    found = _fields(model, fields)
    pk = model._meta.pk
    assert pk is not None
    table = connection.ops.quote_name(model._meta.db_table)
    columns = [_column(connection, f) for f in found]
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            sql = f"UPDATE {table} SET {', '.join(f'{c} = %s' for c in columns)} WHERE {_column(connection, pk)} = %s"
            cursor.executemany(sql, _adapted(rows, _adapters(found, connection)))
            return len(rows)
        types = [f.db_type(connection) for f in [*found, pk]]
        names = [f"v{i}" for i in range(len(types))]
        arrays = ", ".join(f"%s::{t}[]" for t in types)
        sets = ", ".join(f"{c} = u.{n}" for c, n in zip(columns, names, strict=False))
        sql = (
            f"UPDATE {table} SET {sets} FROM unnest({arrays}) AS u({', '.join(names)}) "
            f"WHERE {table}.{_column(connection, pk)} = u.{names[-1]}"
        )
        for start in range(0, len(rows), UNNEST_BATCH):
            part = rows[start : start + UNNEST_BATCH]
            cursor.execute(sql, [list(column) for column in zip(*part, strict=True)])
    return len(rows)


def update_ids(model: type[models.Model], ids: Sequence[int], values: dict[str, Any], *, using: str = "default") -> int:
    """Set the same `values` on every row whose primary key is in `ids`, in one statement however many."""
    if not ids:
        return 0
    connection = connections[using]
    found = _fields(model, list(values))
    pk = model._meta.pk
    assert pk is not None
    table = connection.ops.quote_name(model._meta.db_table)
    params = list(_adapted([list(values.values())], _adapters(found, connection))[0])
    sets = ", ".join(f"{_column(connection, f)} = %s" for f in found)
    ids_param: list[int] | str
    if connection.vendor == "postgresql":
        where, ids_param = f"= ANY(%s::{pk.db_type(connection)}[])", list(ids)
    else:
        where, ids_param = "IN (SELECT value FROM json_each(%s))", json.dumps(list(ids))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {sets} WHERE {_column(connection, pk)} {where}", [*params, ids_param])
    return len(ids)
