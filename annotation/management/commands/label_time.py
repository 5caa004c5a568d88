"""`label_time --dataset NAME | --queue ID`: time per label and how long what is left would take."""

from annotation.selectors.datasets import dataset_get
from annotation.selectors.label_time import queue_label_time, tagging_time
from annotation.selectors.queues import queue_get
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError
from evalapp.validation import raise_problems, seconds_problem


def _s(value) -> str:
    return "—" if value is None else f"{value:g} s"


class Command(EvalCommand):
    help = (
        "Time per label: per expert of a dataset's tagging (--dataset) or per annotator of a queue (--queue), the "
        "count, median, 90th percentile and total active seconds per item, and how long what is left (untagged "
        "questions; labels the queue still needs) takes at each person's median and at the team's. Items with no "
        "figure or 0 s are left out and counted. --json prints what GET /api/datasets/NAME/label-time/ or "
        "/api/queues/ID/label-time/ answers."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", help="the dataset whose tagging is timed")
        parser.add_argument("--queue", help="the labelling queue (its id) whose labels are timed")
        parser.add_argument(
            "--min-seconds",
            default="0",
            help="also leave out items timed under this many seconds, 0..86400 (default 0: only 0 s items)",
        )

    def run(self, **o):
        raw = o["min_seconds"]
        try:
            min_seconds = float(raw)
        except ValueError:
            min_seconds = raw
        raise_problems("bad option", seconds_problem(min_seconds, "min_seconds"))
        if bool(o.get("dataset")) == bool(o.get("queue")):
            both = o.get("dataset") and o.get("queue")
            raise ServiceError(
                "give either --dataset or --queue, not both"
                if both
                else "give --dataset NAME (tagging time) or --queue ID (labelling time)",
                [Problem("one of the two is needed", field="dataset/queue")],
            )
        if o.get("dataset"):
            return tagging_time(dataset_get(o["dataset"]), min_seconds=min_seconds), 0
        return queue_label_time(queue_get(o["queue"]), min_seconds=min_seconds), 0

    def text(self, p):
        where = f"dataset {p['dataset']}" if p["kind"] == "tagging" else f"queue {p['queue']} ({p['name']})"
        who = "expert" if p["kind"] == "tagging" else "annotator"
        lines = [f"Time per {p['unit']}, {where}: {p['left']} left", p["sentence"]]
        if p["excluded"]:
            lines.append(p["excluded"])
        rows = [(who, "items", "timed", "median", "p90", "total", "left at their median")]
        for r in [*p["people"], {"username": "(team)", **p["team"], "note": ""}]:
            rows.append(
                (
                    r["username"],
                    str(r["items"]),
                    str(r["timed"]),
                    _s(r["median_seconds"]),
                    _s(r["p90_seconds"]),
                    _s(r["total_seconds"]),
                    (r["projection"] or "—") + (f"  ({r['note']})" if r["note"] else ""),
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(6)]
        lines.append("")
        lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:6])) + "  " + row[6] for row in rows]
        return "\n".join(line.rstrip() for line in lines)
