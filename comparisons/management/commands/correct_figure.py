from comparisons.selectors.published import correction_words
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
        return f"figure {p['id']} ({p['run_id']}): {correction_words(p['corrections'][0])}"
