"""`manage.py webhooks`: list the webhooks, add one, send a test ping, show deliveries."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError
from evalapp.webhooks import selectors, services


class Command(EvalCommand):
    help = (
        "List webhooks; --add URL --events a,b --secret S adds one; --test ID sends it a ping; "
        "--deliveries [--failed] lists the newest deliveries."
    )

    def add_command_arguments(self, parser: CommandParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--add", metavar="URL", help="add a webhook posting to URL (http or https)")
        action.add_argument("--test", metavar="ID", help="send a ping event to webhook ID")
        action.add_argument("--deliveries", action="store_true", help="list the newest deliveries")
        parser.add_argument("--events", default="", help="with --add: comma-separated event names (none: every event)")
        parser.add_argument("--secret", help="with --add: the HMAC secret the receiver verifies with")
        parser.add_argument("--failed", action="store_true", help="with --deliveries: only the failed ones")

    def run(self, **options: Any) -> tuple[dict[str, Any], int]:
        stray = [
            Problem(f"{flag} goes with {needs}", field=flag)
            for flag, given, needs in (
                ("--events", options["events"], "--add"),
                ("--secret", options["secret"] is not None, "--add"),
                ("--failed", options["failed"], "--deliveries"),
            )
            if given and not options[needs[2:]]
        ]
        if stray:
            raise ServiceError("nothing was done", stray)
        if options["add"] is not None:
            events = [e.strip() for e in options["events"].split(",") if e.strip()]
            webhook = services.webhook_add(url=options["add"], events=events, secret=options["secret"] or "")
            return {"added": webhook.pk, "url": webhook.url, "events": webhook.events}, 0
        if options["test"] is not None:
            try:
                webhook_id = int(options["test"])
            except ValueError:
                raise ServiceError(
                    "no ping was sent", [Problem(f"a webhook id is a number, not {options['test']!r}", field="--test")]
                ) from None
            delivery = services.webhook_ping(webhook_id=webhook_id)
            return {"ping": delivery.pk, "webhook": webhook_id, "event_id": str(delivery.event_id)}, 0
        if options["deliveries"]:
            return {"deliveries": selectors.delivery_rows(failed_only=options["failed"])}, 0
        return {"webhooks": selectors.webhook_rows()}, 0

    def text(self, payload: dict[str, Any]) -> str:
        if "webhooks" in payload:
            lines = [
                f"{w['id']}  {'active' if w['active'] else 'off   '}  {w['url']}  "
                f"{','.join(w['events']) or 'all events'}  " + " ".join(f"{k} {v}" for k, v in w["deliveries"].items())
                for w in payload["webhooks"]
            ]
            return "\n".join(lines) or "no webhooks"
        if "deliveries" in payload:
            lines = [
                f"{d['id']}  {d['event']}  webhook {d['webhook']}  {d['status']}  attempts {d['attempts']}"
                + (f"  last {d['last_status_code']}" if d["last_status_code"] else "")
                + (f"  {d['last_error'][:80]}" if d["last_error"] else "")
                for d in payload["deliveries"]
            ]
            return "\n".join(lines) or "no deliveries"
        if "added" in payload:
            return f"added webhook {payload['added']} → {payload['url']}"
        return f"ping {payload['event_id']} sent to webhook {payload['webhook']} (delivery {payload['ping']})"
