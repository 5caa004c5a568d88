"""Read replicas: the read-only pages and APIs read from the `replica` database when DATABASE_REPLICA_URL
sets one; everything else, and every write, uses the primary.

A view opts in with `use_replica()` (a decorator or a `with` block; `replica_stream` for a streamed
answer's body, which is read after the view returns). Inside it, reads go to the replica except:

- writes, `select_for_update()` and `get_or_create()` (Django routes them as writes: the primary);
- any read while the primary is inside a transaction (`atomic`): what a transaction reads must agree
  with what it writes and locks;
- the models that decide who may see what (users, groups, sessions, tokens, sign-in lockouts, queue
  pools and open items, which make the blind scope): a replica a moment behind must never show a blind
  annotator an answer of a queue they were just put on;
- everything after a viewer's blind scope turns out to hide something (`read_primary()`, which
  annotation.selectors.blind calls): the scope's answers are a subquery of the page's own queries,
  which would otherwise run on the replica.

A replica may be a moment behind the primary; so may the pages that read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

REPLICA = "replica"
# Whole apps, and single models (app_label.model_name), that are always read from the primary.
PRIMARY_APPS = frozenset({"auth", "authtoken", "sessions", "axes", "contenttypes", "admin"})
PRIMARY_MODELS = frozenset({"annotation.queuemember", "annotation.queueitem"})

_reading = ContextVar("evalapp_replica_reads", default=False)
T = TypeVar("T")


@contextmanager
def use_replica() -> Iterator[None]:
    """Reads inside go to the replica (when one is configured), as the module docstring says."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


def read_primary() -> None:
    """The rest of the enclosing `use_replica()` block (and a `replica_stream` made in it) reads the primary."""
    _reading.set(False)


def replica_stream(chunks: Iterable[T]) -> Iterator[T]:
    """A streamed answer's chunks, each read as the view that made the stream read (the replica under
    `use_replica()`, unless `read_primary()` was called): the body of a StreamingHttpResponse is read
    after the view has returned, outside the view's own `use_replica()`."""
    # Read now, in the view: a generator's body would only run once the server reads the first chunk.
    return _stream(iter(chunks), _reading.get())


def _stream(it: Iterator[T], on: bool) -> Iterator[T]:
    while True:
        token = _reading.set(on)
        try:
            chunk = next(it)
        except StopIteration:
            return
        finally:
            _reading.reset(token)
        yield chunk


def replica_reads_on() -> bool:
    """Whether reads under `use_replica()` go to the replica: one is configured and not switched off."""
    return bool(getattr(settings, "DATABASE_REPLICA_READS", False)) and REPLICA in settings.DATABASES


class ReplicaRouter:
    """The router DATABASE_ROUTERS names: the replica for reads under `use_replica()`, else the primary."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        if not _reading.get() or not replica_reads_on():
            return DEFAULT_DB_ALIAS
        meta = model._meta
        if meta.app_label in PRIMARY_APPS or meta.label_lower in PRIMARY_MODELS:
            return DEFAULT_DB_ALIAS
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return DEFAULT_DB_ALIAS
        return REPLICA

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        # The replica holds the primary's rows: an object read from one may point at one read from the other.
        if {obj1._state.db, obj2._state.db} <= {DEFAULT_DB_ALIAS, REPLICA}:
            return True
        return None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        # The replica replicates the primary's schema; migrations run on the primary alone.
        return db != REPLICA
