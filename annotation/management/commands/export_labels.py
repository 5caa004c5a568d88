import json
from pathlib import Path

from annotation.bridges.label_studio import tasks_export
from annotation.selectors.labels import labels_for_export
from annotation.selectors.queues import queue_get
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError

FORMATS = ("jsonl", "label-studio")


class Command(EvalCommand):
    help = (
        "Export human labels as import_labels JSON Lines (one label a line, sorted by run, qid, time); "
        "importing the export again changes nothing. --format label-studio writes the run's answers as "
        "Label Studio tasks (a JSON array, the labels as annotations) and --config-out the labelling "
        "configuration they fit."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--run", help="only this run's labels")
        parser.add_argument("--queue", help="only labels made in this queue")
        parser.add_argument("--output", "-o", help="write to this file instead of stdout")
        parser.add_argument("--format", default="jsonl", help=f"{' or '.join(FORMATS)} (default jsonl)")
        parser.add_argument(
            "--config-out", help="with --format label-studio: write the Label Studio labelling configuration (XML) here"
        )

    def run(self, **o):
        if o["format"] not in FORMATS:
            raise ServiceError(
                f"unknown labels format {o['format']!r}; one of {', '.join(FORMATS)}",
                [Problem(f"must be one of {', '.join(FORMATS)}", field="format")],
            )
        if o.get("json") and not o.get("output"):
            raise ServiceError("--json prints a summary; give --output FILE for the labels themselves")
        if o["format"] == "label-studio":
            return self._label_studio(o)
        if o.get("config_out"):
            raise ServiceError(
                "--config-out goes with --format label-studio",
                [Problem("needs --format label-studio", field="config_out")],
            )
        queue = queue_get(o["queue"]) if o.get("queue") else None
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
        return {"labels": n, "output": o.get("output"), "format": "jsonl"}, 0

    def _label_studio(self, o):
        if not o.get("run") or o.get("queue"):
            raise ServiceError(
                "--format label-studio exports one run's answers: give --run RUN (and no --queue)",
                [Problem("required with --format label-studio", field="run")],
            )
        tasks, config = tasks_export(run_id=o["run"])
        text = json.dumps(tasks, ensure_ascii=False, indent=2) + "\n"
        if o.get("output"):
            Path(o["output"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
        if o.get("config_out"):
            Path(o["config_out"]).write_text(config, encoding="utf-8")
        # A rationale rides on its verdict: it is no label of its own.
        labels = sum(r["type"] != "textarea" for t in tasks for a in t["annotations"] for r in a["result"])
        return {
            "labels": labels,
            "tasks": len(tasks),
            "annotations": sum(len(t["annotations"]) for t in tasks),
            "output": o.get("output"),
            "config_out": o.get("config_out"),
            "format": "label-studio",
        }, 0

    def handle(self, *args, **options):
        # Labels already went to stdout: say how many on stderr, keep stdout pure JSON Lines.
        payload, _code = self.run_or_exit(**options)
        if options.get("json"):
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
        else:
            where = f" written to {payload['output']}" if payload["output"] else ""
            if payload["format"] == "label-studio":
                config = (
                    f"; the labelling configuration in {payload['config_out']}"
                    if payload["config_out"]
                    else "; give --config-out FILE for the labelling configuration they fit"
                )
                self.stderr.write(f"{payload['tasks']} tasks, {payload['annotations']} annotations{where}{config}")
            else:
                self.stderr.write(f"{payload['labels']} labels{where}")
