import json

from annotation.selectors.labels import labels_for_export
from annotation.selectors.queues import queue_get
from evalapp.commands import EvalCommand
from evalapp.errors import ServiceError


class Command(EvalCommand):
    help = (
        "Export human labels as import_labels JSON Lines (one label a line, sorted by run, qid, time); "
        "importing the export again changes nothing."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--run", help="only this run's labels")
        parser.add_argument("--queue", help="only labels made in this queue")
        parser.add_argument("--output", "-o", help="write to this file instead of stdout")

    def run(self, **o):
        queue = queue_get(o["queue"]) if o.get("queue") else None
        if o.get("json") and not o.get("output"):
            raise ServiceError("--json prints a summary; give --output FILE for the labels themselves")
        rows = labels_for_export(run_id=o.get("run"), queue=queue)
        handle = open(o["output"], "w", encoding="utf-8") if o.get("output") else None  # noqa: SIM115  (closed in finally)
        n = 0
        try:
            for row in rows:
                line = json.dumps(row, ensure_ascii=False) + "\n"
                handle.write(line) if handle else self.stdout.write(line, ending="")
                n += 1
        finally:
            if handle:
                handle.close()
        return {"labels": n, "output": o.get("output")}, 0

    def handle(self, *args, **options):
        # Labels already went to stdout: say how many on stderr, keep stdout pure JSON Lines.
        payload, _code = self.run_or_exit(**options)
        if options.get("json"):
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
        else:
            self.stderr.write(
                f"{payload['labels']} labels" + (f" written to {payload['output']}" if payload["output"] else "")
            )
