"""Outside a transaction the dataset diff and the comparison read on connections of their own, side by side
(evalapp.db.side_by_side); inside one, one after the other on the caller's: the same object either way."""

import threading

import pytest
from django.db import connection, transaction

import evalapp.db
from annotation.models import Run
from annotation.selectors.datasets import dataset_get
from comparisons.selectors.compare import compare_runs
from comparisons.selectors.diff import dataset_diff
from tests.comparisons.support import build_series

pytestmark = pytest.mark.django_db(transaction=True)


def _both(series):
    runs = {r.run_id: r for r in Run.objects.all()}
    diff = dataset_diff(
        dataset_get("support"),
        series["v2"]["dataset_hash"],
        series["v3"]["dataset_hash"],
        run_old=runs["r3"],
        run_new=runs["r4"],
    )
    return diff, compare_runs(run_a="r2", run_b="r4", iters=2000), compare_runs(run_a="r1", run_b="r2", iters=2000)


def test_diff_and_compare_side_by_side_equal_one_after_the_other(tmp_path, monkeypatch):
    series = build_series(tmp_path)  # span-graded answers: each run graded by the rule, records read
    threads: list[str] = []
    on_own = evalapp.db._on_own_connection

    def spy(context, call):
        threads.append(threading.current_thread().name)
        return on_own(context, call)

    monkeypatch.setattr(evalapp.db, "_on_own_connection", spy)
    side = _both(series)
    # Three reads for the diff (partitions, two runs' grades) and for each comparison (two grades, strata), the
    # first on this thread; on SQLite (a library in the process, no server to work meanwhile) all inline.
    inline_only = connection.vendor != "postgresql"
    assert len(threads) == (0 if inline_only else 6)
    assert all(name.startswith("side-by-side") for name in threads)
    with transaction.atomic():
        inline = _both(series)
    assert len(threads) == (0 if inline_only else 6)  # none more: inside the transaction, inline
    assert side == inline
    diff = side[0]
    assert (diff["added"], diff["modified"]) == (["q-0010", "q-0011"], [])
    assert diff["movement"]["old_aggregate"] == 0.8


def test_side_by_side_reads_what_the_transaction_wrote_inline():
    with transaction.atomic():
        Run.objects.create(run_id="uncommitted", system="s")
        found = evalapp.db.side_by_side(
            lambda: Run.objects.filter(run_id="uncommitted").count(), lambda: threading.current_thread().name
        )
    assert found == [1, threading.current_thread().name]
