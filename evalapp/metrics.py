"""Prometheus metrics: what `/metrics` serves and what the Celery workers count.

Requests are counted by django-prometheus's middleware. Celery tasks are counted here from Celery's
signals (`evalapp_celery_tasks_total{task, state}`, `evalapp_celery_task_seconds{task}`), in the process
that runs them: with PROMETHEUS_MULTIPROC_DIR set (one directory the web and worker processes of a
machine share, as prometheus_client's multiprocess mode asks), `/metrics` adds every process's counts; a
worker on another machine serves its own at EVALAPP_WORKER_METRICS_PORT. Figures that live in the
database (queue depth, calibration and grading runs in flight) are read when `/metrics` is scraped, from
the sources the apps register (`register_source`), so they are right whichever process changed them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CELERY_TASKS = Counter("evalapp_celery_tasks", "Celery tasks finished, by task name and final state", ["task", "state"])
CELERY_RETRIES = Counter("evalapp_celery_task_retries", "Celery task retries, by task name", ["task"])
CELERY_SECONDS = Histogram(
    "evalapp_celery_task_seconds",
    "Wall time of a Celery task, by task name",
    ["task"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
JUDGE_CALLS = Counter(
    "evalapp_judge_calls",
    "Calls to a judge backend, by backend and outcome (ok, invalid, transient, error)",
    ["backend", "outcome"],
)
JUDGE_RATE_LIMITED = Counter(
    "evalapp_judge_rate_limited", "HTTP 429 answers from a judge server, by backend", ["backend"]
)
JUDGE_RETRIES = Counter(
    "evalapp_judge_retries", "Judge calls retried after a transient failure, by backend", ["backend"]
)

# A source yields (metric name, help, [(labels, value), ...]) for gauges read from the database.
Source = Callable[[], Iterable[tuple[str, str, list[tuple[dict[str, str], float]]]]]
_SOURCES: list[Source] = []


def register_source(source: Source) -> Source:
    """Add a gauge source read at every scrape (the apps register theirs in AppConfig.ready)."""
    if source not in _SOURCES:
        _SOURCES.append(source)
    return source


class _DatabaseGauges(Collector):
    """Every registered source's gauges, and `evalapp_metrics_source_up{source}`: 0 for a source that failed
    (the database down, say), whose gauges are then left out rather than failing the whole scrape."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "evalapp_metrics_source_up", "1 when a database gauge source could be read", labels=["source"]
        )
        for source in _SOURCES:
            try:
                families = list(source())
            except Exception:  # a scrape reports the failure and carries on
                up.add_metric([source.__module__ + "." + source.__name__], 0)
                continue
            up.add_metric([source.__module__ + "." + source.__name__], 1)
            for name, documentation, samples in families:
                labels = sorted({k for labelled, _ in samples for k in labelled})
                family = GaugeMetricFamily(name, documentation, labels=labels)
                for labelled, value in samples:
                    family.add_metric([labelled.get(k, "") for k in labels], value)
                yield family
        yield up


def exposition() -> bytes:
    """The Prometheus text of this process (or of every process sharing PROMETHEUS_MULTIPROC_DIR) and of
    the database gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        processes = generate_latest(registry)
    else:
        processes = generate_latest(REGISTRY)
    gauges = CollectorRegistry(auto_describe=False)
    gauges.register(_DatabaseGauges())
    return processes + generate_latest(gauges)


_started: dict[str, float] = {}


# A task whose child was killed never reaches task_postrun: its start is dropped once this many are pending.
_STARTED_MAX = 10_000


def task_started(task_id: str | None = None, **_: object) -> None:
    if task_id:
        if len(_started) >= _STARTED_MAX:
            _started.pop(next(iter(_started)))  # the oldest: dicts keep insertion order
        _started[task_id] = time.monotonic()


def task_finished(task_id: str | None = None, task: Any = None, state: str | None = None, **_: object) -> None:
    name = getattr(task, "name", None) or "unknown"
    CELERY_TASKS.labels(task=name, state=state or "unknown").inc()
    began = _started.pop(task_id or "", None)
    if began is not None:
        CELERY_SECONDS.labels(task=name).observe(time.monotonic() - began)


def task_retried(request: Any = None, **_: object) -> None:
    CELERY_RETRIES.labels(task=getattr(request, "task", None) or "unknown").inc()


def serve_worker_metrics(**_: object) -> None:
    """In a worker's main process: serve its metrics at EVALAPP_WORKER_METRICS_PORT, when set."""
    port = os.environ.get("EVALAPP_WORKER_METRICS_PORT")
    if not port:
        return
    from prometheus_client import start_http_server

    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    start_http_server(int(port), addr=os.environ.get("EVALAPP_WORKER_METRICS_ADDRESS", "127.0.0.1"), registry=registry)
