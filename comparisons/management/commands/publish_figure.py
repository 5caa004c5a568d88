from django.utils.dateparse import parse_datetime

from comparisons.services.published import figure_publish
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = (
        "Record that a run's score was shown to someone (the score, n, dataset and evaluator hashes as they are "
        "now), so that a later change of population flags it (`published`, the series page)."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("run_id", metavar="RUN")
        parser.add_argument("--to", required=True, help="to whom it was shown (a deck, a report, a team)")
        parser.add_argument("--at", default="", help="when (ISO 8601; default now)")
        parser.add_argument("--note", default="")

    def run(self, **o):
        shown_at = None
        if o["at"]:
            shown_at = parse_datetime(o["at"])
            if shown_at is None:
                raise ServiceError(
                    f"--at {o['at']!r} is not an ISO 8601 date and time", [Problem("not ISO 8601", field="--at")]
                )
        return figure_publish(run_id=o["run_id"], shown_to=o["to"], shown_at=shown_at, note=o["note"]), 0

    def text(self, p):
        return f"published figure {p['id']}: run {p['run_id']} {p['score']:.3f} on n={p['n']}, shown to {p['shown_to']}"
