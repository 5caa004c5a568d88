"""The operator's endpoints: /healthz asks nothing of anything, /readyz names what is down, /metrics serves
Prometheus text to the clients the settings admit, with requests, Celery tasks and the database gauges."""

import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from annotation.models import QueueItem
from calibration import tasks
from evalapp.celery import app
from tests.factories import QueueFactory, QueueItemFactory


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) -> value, parsed by prometheus_client's own parser."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.mark.django_db
def test_healthz_answers_without_a_statement(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        res = client.get("/healthz")
    assert (res.status_code, res.json()) == (200, {"status": "ok"})
    assert "no-cache" in res["Cache-Control"]
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_readyz_names_the_missing_worker_and_a_broker_that_is_down(client, settings, monkeypatch):
    settings.READYZ_TIMEOUT = 0.3
    res = client.get("/readyz")
    body = res.json()
    assert res.status_code == 503
    assert (body["database"], body["broker"]) == ("ok", "ok")
    assert body["worker"] == "down: no worker answered a ping within 0.3 s"
    assert set(body["ms"]) == {"database", "broker", "worker"}

    settings.READYZ_REQUIRE_WORKER = False
    res = client.get("/readyz")
    assert res.status_code == 200
    assert {k: v for k, v in res.json().items() if k != "ms"} == {
        "database": "ok",
        "broker": "ok",
        "worker": "not checked",
    }

    settings.READYZ_REQUIRE_WORKER = True
    # Celery reads the CELERY_BROKER_URL environment variable before its own configuration (the
    # PostgreSQL + Redis pass sets it), so the broker that is down is named there.
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:1/0")  # nothing listens on port 1
    assert app.conf.broker_write_url == "redis://127.0.0.1:1/0"
    res = client.get("/readyz")
    monkeypatch.undo()
    body = res.json()
    assert res.status_code == 503
    assert body["database"] == "ok"
    assert body["broker"].startswith("down: ") and "refused" in body["broker"].lower()
    assert body["worker"] == "down: the broker is down, so no worker can be reached"


@pytest.mark.django_db
def test_metrics_count_requests_tasks_and_queue_depth(client, settings):
    queue = QueueFactory.create(name="faithfulness batch", overlap=2)
    QueueItemFactory.create_batch(3, queue=queue)
    QueueItemFactory(queue=queue, done=1)
    QueueItemFactory(queue=queue, status=QueueItem.DISPUTED, done=2)
    QueueItemFactory(queue=queue, status=QueueItem.AGREED, done=2)
    before = samples(client.get("/metrics").content.decode())
    client.get("/healthz")
    tasks.sweep_stalled.apply()  # a task run in this process: its counts land here
    res = client.get("/metrics")
    assert res.status_code == 200
    assert res["Content-Type"].startswith("text/plain")
    after = samples(res.content.decode())
    labels = (("name", "faithfulness batch"), ("queue", str(queue.pk)))
    assert after[("evalapp_queue_items_open", labels)] == 4
    assert after[("evalapp_queue_labels_missing", labels)] == 3 * 2 + 1
    assert after[("evalapp_queue_items_disputed", labels)] == 1
    assert after[("evalapp_calibration_runs_in_flight", (("status", "running"),))] == 0

    def delta(name, labels):
        return after.get((name, labels), 0) - before.get((name, labels), 0)

    task = (("state", "SUCCESS"), ("task", tasks.sweep_stalled.name))
    assert delta("evalapp_celery_tasks_total", task) == 1
    assert delta("evalapp_celery_task_seconds_count", (("task", tasks.sweep_stalled.name),)) == 1
    # django-prometheus's middleware counted the /healthz request and the first /metrics one.
    view = (("method", "GET"), ("transport", "http"), ("view", "healthz"))
    assert delta("django_http_requests_total_by_view_transport_method_total", view) == 1
    assert after[("evalapp_metrics_source_up", (("source", "annotation.metrics.queue_depth"),))] == 1


@pytest.mark.django_db
def test_metrics_answer_only_the_clients_the_settings_admit(client, settings):
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    settings.METRICS_ALLOW = "any"
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    settings.METRICS_TOKEN = "s3cret-token"
    refused = client.get("/metrics")
    assert (refused.status_code, refused["WWW-Authenticate"]) == (401, 'Bearer realm="metrics"')
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    ok = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert ok.status_code == 200 and re.search(rb"^evalapp_queue_items_open", ok.content, re.M) is None


@pytest.mark.django_db
def test_a_source_that_fails_is_reported_and_the_scrape_goes_on(client):
    from evalapp import metrics

    def broken():
        raise RuntimeError("the database went away")
        yield  # a generator, as the sources are

    metrics.register_source(broken)
    try:
        res = client.get("/metrics")
    finally:
        metrics._SOURCES.remove(broken)
    found = samples(res.content.decode())
    assert res.status_code == 200
    assert found[("evalapp_metrics_source_up", (("source", f"{__name__}.broken"),))] == 0
    assert found[("evalapp_metrics_source_up", (("source", "calibration.metrics.runs_in_flight"),))] == 1
