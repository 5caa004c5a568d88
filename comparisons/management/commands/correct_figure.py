from comparisons.services.published import figure_correct
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Keep a correction beside a published figure: the run re-scored on its dataset's latest version, and the "
        "cause (by default what made the figure non-comparable)."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("figure_id", type=int, metavar="FIGURE")
        parser.add_argument("--cause", default="", help="why (default: the population change found)")

    def run(self, **o):
        return figure_correct(figure_id=o["figure_id"], cause=o["cause"]), 0

    def text(self, p):
        c = p["corrections"][0]
        now = (
            f"{c['comparable_score']:.3f} on n={c['comparable_n']}"
            if c["comparable_score"] is not None
            else c["unresolved"]
        )
        return f"figure {p['id']} ({p['run_id']}): shown {c['shown_score']:.3f}, comparable {now}; cause: {c['cause']}"
