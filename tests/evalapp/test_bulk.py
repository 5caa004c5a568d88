"""evalapp.bulk.RowWriter: batches written on a thread of its own, inside the caller's transaction."""

import threading

import pytest
from django.db import IntegrityError, connection, connections, transaction

from annotation.models import Answer, Run
from evalapp.bulk import RowWriter, insert_rows
from tests.factories import RunFactory

COLUMNS = ("run", "qid", "answer", "correct", "retrieved", "prompt_chunks", "extra", "final_verdict", "final_source")


def a_run() -> Run:
    run = RunFactory()
    assert isinstance(run, Run)
    return run


def sharing() -> int:
    """How many holders share the default connection with other threads: a session's live server over an
    in-memory SQLite database is one, so a test compares the count before and after."""
    return int(vars(connections["default"])["_thread_sharing_count"])


def rows(run: Run, start: int, stop: int) -> list[tuple]:
    return [(run.pk, f"q-{i:05d}", f"answer {i}", i % 2 == 0, "[]", "[]", "{}", "", "") for i in range(start, stop)]


@pytest.mark.django_db
def test_every_batch_is_written_in_order_before_the_block_ends():
    run = a_run()
    with RowWriter(Answer, COLUMNS) as writer:
        for start in range(0, 2500, 500):
            writer.put(rows(run, start, start + 500))
        writer.put([])
    assert writer.written == 2500
    stored = list(Answer.objects.filter(run=run).order_by("pk").values_list("qid", "answer", "correct"))
    assert len(stored) == 2500
    assert stored[0] == ("q-00000", "answer 0", True)
    assert stored[-1] == ("q-02499", "answer 2499", False)
    assert [q for q, _, _ in stored] == [f"q-{i:05d}" for i in range(2500)]


@pytest.mark.django_db
def test_the_writes_are_on_another_thread_and_in_the_callers_transaction(monkeypatch):
    run = a_run()
    threads = set()
    original = connection.cursor

    def cursor(*args, **kwargs):
        threads.add(threading.get_ident())
        return original(*args, **kwargs)

    with pytest.raises(RuntimeError, match="the caller gave up"), transaction.atomic():
        monkeypatch.setattr(connection, "cursor", cursor)
        try:
            with RowWriter(Answer, COLUMNS) as writer:
                writer.put(rows(run, 0, 300))
        finally:
            monkeypatch.undo()
        assert Answer.objects.filter(run=run).count() == 300
        raise RuntimeError("the caller gave up")
    assert threads and threading.get_ident() not in threads
    # Rolled back with the caller's transaction: the rows were never committed on a connection of their own.
    assert Answer.objects.filter(run=run).count() == 0


@pytest.mark.django_db
def test_a_failed_write_is_raised_in_the_caller_and_later_batches_are_dropped():
    run = a_run()
    Answer.objects.create(run=run, qid="q-00005", answer="already here")
    before = sharing()
    with pytest.raises(IntegrityError), transaction.atomic(), RowWriter(Answer, COLUMNS) as writer:
        writer.put(rows(run, 0, 10))  # q-00005 is taken
        writer.put(rows(run, 10, 20))
    assert list(Answer.objects.filter(run=run).values_list("qid", "answer")) == [("q-00005", "already here")]
    # The connection is the caller's alone again.
    assert sharing() == before


@pytest.mark.django_db
def test_a_failed_write_is_raised_at_the_next_put():
    run = a_run()
    Answer.objects.create(run=run, qid="q-00001", answer="already here")
    raised_at = None
    with pytest.raises(IntegrityError), transaction.atomic(), RowWriter(Answer, COLUMNS) as writer:
        writer.put(rows(run, 0, 10))
        for i in range(100):
            raised_at = i
            assert writer._thread is not None
            writer._thread.join(0.01)  # give the writer its turn; the put after its failure raises
            writer.put(rows(run, 100 + 10 * i, 110 + 10 * i))
    assert raised_at is not None and raised_at < 99
    assert Answer.objects.filter(run=run).count() == 1


@pytest.mark.django_db
def test_the_callers_exception_waits_for_the_writer_then_goes_on_and_nothing_stays():
    run = a_run()
    before = sharing()
    with pytest.raises(ValueError, match="line 7"), transaction.atomic(), RowWriter(Answer, COLUMNS) as writer:
        writer.put(rows(run, 0, 1000))
        writer.put(rows(run, 1000, 2000))
        raise ValueError("line 7: bad")
    assert writer._thread is not None and not writer._thread.is_alive()
    assert sharing() == before
    assert Answer.objects.filter(run=run).count() == 0


@pytest.mark.django_db
def test_a_writer_and_insert_rows_store_the_same_rows():
    first, second = a_run(), a_run()
    insert_rows(Answer, COLUMNS, rows(first, 0, 1500))
    with RowWriter(Answer, COLUMNS) as writer:
        writer.put(rows(second, 0, 1500))
    fields = ("qid", "answer", "correct", "retrieved", "prompt_chunks", "extra")
    assert list(Answer.objects.filter(run=first).order_by("qid").values_list(*fields)) == list(
        Answer.objects.filter(run=second).order_by("qid").values_list(*fields)
    )


@pytest.mark.django_db
def test_the_statements_are_counted_as_the_callers(django_assert_num_queries):
    run = a_run()
    # SQLite: multi-row INSERTs of at most 1,000 rows, two for each batch of 1,200 and one for the last.
    # PostgreSQL: the two batches over COPY_MIN go by COPY and the last by one INSERT.
    expected = 5 if connection.vendor == "sqlite" else 3
    with django_assert_num_queries(expected), RowWriter(Answer, COLUMNS) as writer:
        writer.put(rows(run, 0, 1200))
        writer.put(rows(run, 1200, 2400))
        writer.put(rows(run, 2400, 2500))
    assert Answer.objects.filter(run=run).count() == 2500
