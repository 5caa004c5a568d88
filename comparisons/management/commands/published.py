from comparisons.selectors.published import correction_words, figure_words, published_figures
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "The published figures with their status: flagged when a later dataset version or evaluator config "
        "makes a later number non-comparable, with the corrections kept beside them."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", default="")
        parser.add_argument("--run", default="")

    def run(self, **o):
        figures = published_figures(dataset=o["dataset"] or None, run_ids=[o["run"]] if o["run"] else None)
        return {
            "figures": figures,
            "flagged": sum(not f["comparable"] for f in figures),
            "uncorrected": sum(not f["comparable"] and not f["corrections"] for f in figures),
        }, 0

    def text(self, p):
        lines = []
        for f in p["figures"]:
            lines.append(
                f"{f['id']:>4}  {f['run_id']} {f['score']:.3f} (n={f['n']}) shown to {f['shown_to']}: {figure_words(f)}"
            )
            lines += [f"      corrected: {correction_words(c)}" for c in f["corrections"]]
        lines.append(
            f"{len(p['figures'])} figure(s), {p['flagged']} flagged, {p['uncorrected']} flagged without a correction"
        )
        return "\n".join(lines)
