"""The webhooks admin (secret write-only, deliveries read-only with redeliver) and the webhooks command."""

import json

import pytest
from django.contrib.auth import get_user_model

from evalapp.webhooks.models import Delivery, Webhook
from tests.conftest import run_cmd


@pytest.fixture
def admin_client(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123"))
    return client


def test_the_secret_is_written_never_shown_and_kept_when_left_empty(admin_client):
    added = admin_client.post(
        "/admin/webhooks/webhook/add/",
        {
            "url": "https://hooks.example.org/x",
            "events": ["gate.status_changed"],
            "secret": "s3cr3t-value",
            "active": "on",
        },
    )
    assert added.status_code == 302
    webhook = Webhook.objects.get()
    assert (webhook.url, webhook.events, webhook.secret) == (
        "https://hooks.example.org/x",
        ["gate.status_changed"],
        "s3cr3t-value",
    )
    for page in ("/admin/webhooks/webhook/", f"/admin/webhooks/webhook/{webhook.pk}/change/"):
        body = admin_client.get(page)
        assert body.status_code == 200 and b"s3cr3t-value" not in body.content
    changed = admin_client.post(
        f"/admin/webhooks/webhook/{webhook.pk}/change/", {"url": "https://hooks.example.org/y", "secret": ""}
    )
    assert changed.status_code == 302
    webhook.refresh_from_db()
    assert (webhook.url, webhook.events, webhook.secret, webhook.active) == (
        "https://hooks.example.org/y",
        [],
        "s3cr3t-value",
        False,
    )


def test_an_ftp_url_is_refused_in_the_admin_and_nothing_is_written(admin_client):
    page = admin_client.post("/admin/webhooks/webhook/add/", {"url": "ftp://example.org/x", "secret": "s"})
    assert page.status_code == 200 and b"errorlist" in page.content
    assert Webhook.objects.count() == 0


def test_deliveries_are_read_only_and_can_be_redelivered(admin_client, django_capture_on_commit_callbacks):
    webhook = Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s")
    delivery = Delivery.objects.create(
        webhook=webhook, event="grading.finished", payload="{}", status="failed", attempts=8
    )
    page = admin_client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert admin_client.post(f"/admin/webhooks/delivery/{delivery.pk}/delete/", {"post": "yes"}).status_code == 403
    with django_capture_on_commit_callbacks(execute=False) as scheduled:
        done = admin_client.post(
            "/admin/webhooks/delivery/", {"action": "redeliver", "_selected_action": [delivery.pk]}
        )
    assert done.status_code == 302 and len(scheduled) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 0)


def test_the_command_adds_lists_pings_and_shows_deliveries(db, django_capture_on_commit_callbacks):
    code, out, _ = run_cmd(
        "webhooks", "--add", "https://hooks.example.org/x", "--events", "grading.finished,gate.status_changed",
        "--secret", "s3cr3t-cli", "--json",
    )  # fmt: skip
    webhook = Webhook.objects.get()
    assert (code, json.loads(out)) == (
        0,
        {
            "added": webhook.pk,
            "url": "https://hooks.example.org/x",
            "events": ["gate.status_changed", "grading.finished"],
        },
    )
    with django_capture_on_commit_callbacks(execute=False) as scheduled:
        code, out, _ = run_cmd("webhooks", "--test", str(webhook.pk), "--json")
    ping = Delivery.objects.get()
    assert (code, json.loads(out), len(scheduled)) == (
        0,
        {"ping": ping.pk, "webhook": webhook.pk, "event_id": str(ping.event_id)},
        1,
    )
    assert json.loads(ping.payload)["data"] == {"webhook": webhook.pk, "url": "https://hooks.example.org/x"}
    code, out, _ = run_cmd("webhooks", "--json")
    assert json.loads(out)["webhooks"] == [
        {
            "id": webhook.pk,
            "url": "https://hooks.example.org/x",
            "events": ["gate.status_changed", "grading.finished"],
            "active": True,
            "created_at": webhook.created_at.isoformat().replace("+00:00", "Z"),
            "deliveries": {"pending": 1, "delivered": 0, "failed": 0},
        }
    ]
    assert "s3cr3t-cli" not in out and "secret" not in out
    rows = json.loads(run_cmd("webhooks", "--deliveries", "--json")[1])["deliveries"]
    assert [(r["id"], r["event"], r["status"], r["attempts"]) for r in rows] == [(ping.pk, "ping", "pending", 0)]
    assert json.loads(run_cmd("webhooks", "--deliveries", "--failed", "--json")[1]) == {"deliveries": []}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--add", "ftp://example.org/x", "--secret", "s"], "url"),
        (["--add", "https://example.org/x", "--events", "gate.moved", "--secret", "s"], "events"),
        (["--add", "https://example.org/x"], "secret"),
        (["--test", "abc"], "--test"),
        (["--secret", "s"], "--secret"),  # an option of --add given without it
        (["--failed"], "--failed"),
    ],
)
def test_bad_input_exits_2_naming_the_field_and_writes_nothing(db, args, field):
    code, out, err = run_cmd("webhooks", *args, "--json")
    assert code == 2
    assert [p["field"] for p in json.loads(out)["problems"]] == [field]
    assert "error:" in err
    assert Webhook.objects.count() == 0 and Delivery.objects.count() == 0


def test_a_ping_to_an_unknown_webhook_is_refused(db):
    code, out, _ = run_cmd("webhooks", "--test", "99", "--json")
    assert (code, json.loads(out)) == (2, {"error": "there is no webhook 99", "problems": []})


def test_staff_who_are_not_superusers_see_no_webhook_or_delivery_page(client, db):
    from django.contrib.auth.models import Permission

    staff = get_user_model().objects.create_user("staff", password="pw-staff-123", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="webhooks"))
    webhook = Webhook.objects.create(url="http://127.0.0.1:9/hook", secret="s")
    delivery = Delivery.objects.create(webhook=webhook, event="calibration.finished", payload='{"kappa": 0.41}')
    client.force_login(staff)
    for page in (
        "/admin/webhooks/webhook/",
        "/admin/webhooks/delivery/",
        f"/admin/webhooks/delivery/{delivery.pk}/change/",
        "/admin/webhooks/watchedstate/",
    ):
        assert client.get(page).status_code == 403, page
    assert b"webhooks" not in client.get("/admin/").content.lower()
