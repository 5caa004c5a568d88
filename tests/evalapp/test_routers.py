"""The read replica (evalapp.routers): the read-only pages and APIs read from it, everything else from the
primary. In tests the replica is the test database itself (a mirror, another connection), so these tests
commit (transaction=True) and prove the routing by which connection ran each query."""

import json
import re
import threading

import pytest
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

import evalapp.db
from annotation.models import Answer, Run
from evalapp.routers import REPLICA, ReplicaRouter, read_primary, replica_stream, use_replica
from tests.comparisons.support import build_300, import_run, run_command
from tests.factories import QueueItemFactory, QueueMemberFactory

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])

# What the primary may still read on a replica page: who the viewer is and what they may see.
PRIMARY_TABLES = {
    "auth_user",
    "auth_group",
    "auth_user_groups",
    "authtoken_token",
    "django_session",
    "annotation_queueitem",
    "annotation_queuemember",
}


@pytest.fixture(autouse=True)
def replica_reads(settings, monkeypatch):
    settings.DATABASE_REPLICA_READS = True
    # These tests tell the routing by the connection each query ran on, so the reads a comparison makes side by
    # side, on threads' own connections (evalapp.db.side_by_side), run inline here on this thread's; that the
    # threads route as their caller would is the last test's.
    monkeypatch.setattr(evalapp.db, "_own_connections_safe", lambda: False)


def tables(queries) -> set[str]:
    """The first table each SELECT reads from."""
    found = (re.search(r'FROM "(\w+)"', q["sql"]) for q in queries if q["sql"].startswith("SELECT"))
    return {m.group(1) for m in found if m}


def writes(queries) -> list[dict]:
    return [q for q in queries if q["sql"].startswith(("INSERT", "UPDATE", "DELETE"))]


def captured():
    return CaptureQueriesContext(connections["default"]), CaptureQueriesContext(connections[REPLICA])


def test_the_compare_api_reads_the_replica_and_answers_as_the_primary_would(tmp_path, api_client_for):
    build_300(tmp_path, repeats=False)
    api = api_client_for("eng", "engineer")
    primary, replica = captured()
    with primary, replica:
        res = api.get("/api/compare/", {"a": "A", "b": "B"})
    assert res.status_code == 200
    body = res.json()
    assert (body["n"], body["diff_points"], body["b_only"], body["a_only"]) == (300, 8.0, 38, 14)
    assert body == run_command("compare", "A", "B")  # the command reads the primary
    assert {"annotation_run", "annotation_answer"} <= tables(replica.captured_queries)
    # The primary answered who the viewer is and what they may see, nothing of the comparison itself.
    assert tables(primary.captured_queries) <= PRIMARY_TABLES
    assert not writes(replica.captured_queries)
    # The page keeps a gold-check report it worked out: a write, on the primary.
    assert [q for q in writes(primary.captured_queries) if "annotation_goldcheckreport" in q["sql"]]


def test_a_streamed_export_reads_the_replica_to_its_last_line(tmp_path, api_client_for):
    build_300(tmp_path, repeats=False)
    api = api_client_for("eng", "engineer")
    primary, replica = captured()
    with primary, replica:
        res = api.get("/api/datasets/support/versions/v1/export/")
        assert res.status_code == 200
        body = b"".join(res.streaming_content).decode()
    lines = [json.loads(line) for line in body.splitlines()]
    assert len(lines) == 300 and lines[0]["qid"] == "q-0000" and lines[-1]["qid"] == "q-0299"
    assert "annotation_versionentry" in tables(replica.captured_queries)
    assert tables(primary.captured_queries) <= PRIMARY_TABLES


def test_the_series_page_reads_the_replica(tmp_path, client, make_user):
    build_300(tmp_path, repeats=False)
    client.force_login(make_user("eng", "engineer"))
    primary, replica = captured()
    with primary, replica:
        res = client.get("/series/", {"dataset": "support"})
    assert res.status_code == 200
    assert "annotation_run" in tables(replica.captured_queries)
    assert tables(primary.captured_queries) <= PRIMARY_TABLES


def test_a_blind_viewers_page_reads_the_primary_alone(tmp_path, api_client_for):
    """An engineer in the pool of an open item of another run: the scope's subqueries must not lag."""
    build_300(tmp_path, repeats=False)
    api = api_client_for("eng", "engineer")
    other = Run.objects.create(run_id="C", system="rag-v3", record={"run_id": "C", "system": "rag-v3"})
    item = QueueItemFactory(answer=Answer.objects.create(run=other, qid="q-0000", answer="x", correct=True))
    QueueMemberFactory(queue=item.queue, user=api.user)
    primary, replica = captured()
    with primary, replica:
        res = api.get("/api/compare/", {"a": "A", "b": "B"})
    assert res.status_code == 200 and res.json()["n"] == 300
    assert replica.captured_queries == []
    assert {"annotation_run", "annotation_answer"} <= tables(primary.captured_queries)


def test_writes_locks_and_reads_in_a_transaction_never_use_the_replica(tmp_path):
    build_300(tmp_path, repeats=False)
    primary, replica = captured()
    with use_replica(), primary, replica:
        run = Run.objects.create(run_id="C", system="rag-v3", record={"run_id": "C", "system": "rag-v3"})
        Run.objects.filter(pk=run.pk).update(system="rag-v4")
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(run_id="A")
            seen = Answer.objects.filter(run=locked).count()
        run.delete()
    assert (locked.run_id, seen) == ("A", 300)
    assert replica.captured_queries == []
    assert len(primary.captured_queries) >= 5
    # The same read outside the transaction goes to the replica; outside use_replica, to the primary.
    with primary, replica:
        with use_replica():
            assert Answer.objects.filter(run__run_id="A").count() == 300
        assert Answer.objects.filter(run__run_id="B").count() == 300
    assert len(replica.captured_queries) == 1 and "annotation_answer" in replica.captured_queries[0]["sql"]
    assert len(primary.captured_queries) == 1


def test_an_import_under_use_replica_writes_and_reads_the_primary(tmp_path):
    v, _ = build_300(tmp_path, repeats=False)
    primary, replica = captured()
    with use_replica(), primary, replica:
        import_run(tmp_path, run_id="C", system="rag-v3", dataset="support", dataset_hash=v["dataset_hash"], correct={})
    assert Run.objects.filter(run_id="C").exists()
    assert writes(replica.captured_queries) == []
    assert any("annotation_run" in q["sql"] for q in writes(primary.captured_queries))


def test_a_stream_reads_as_the_view_that_made_it():
    def chunks():
        for _ in range(2):
            yield ReplicaRouter().db_for_read(Run)

    with use_replica():
        stream = replica_stream(chunks())
    assert list(stream) == [REPLICA, REPLICA]  # read after the view's block ended
    assert list(replica_stream(chunks())) == ["default", "default"]


def test_the_router_without_replica_reads_uses_the_primary(settings):
    settings.DATABASE_REPLICA_READS = False
    router = ReplicaRouter()
    with use_replica():
        assert router.db_for_read(Run) == "default"
    assert router.db_for_write(Run) == "default"
    assert router.allow_migrate("default", "annotation") is True
    assert router.allow_migrate(REPLICA, "annotation") is False


def test_reads_side_by_side_route_as_their_caller_would(monkeypatch):
    monkeypatch.undo()  # threads of their own, as outside a test
    threads: list[str] = []
    on_own = evalapp.db._on_own_connection

    def spy(context, call):
        threads.append(threading.current_thread().name)
        return on_own(context, call)

    monkeypatch.setattr(evalapp.db, "_on_own_connection", spy)
    monkeypatch.setattr("django.conf.settings.DATABASE_REPLICA_READS", True)
    which = Run.objects.all
    with use_replica():
        assert evalapp.db.side_by_side(lambda: which().db, lambda: which().db) == [REPLICA, REPLICA]
        read_primary()
        assert evalapp.db.side_by_side(lambda: which().db, lambda: which().db) == ["default", "default"]
    assert evalapp.db.side_by_side(lambda: which().db, lambda: which().db) == ["default", "default"]
    # On SQLite (a library in the process: nothing to gain) the reads run inline.
    inline_only = connections["default"].vendor != "postgresql"
    assert len(threads) == (0 if inline_only else 3) and all(name.startswith("side-by-side") for name in threads)
