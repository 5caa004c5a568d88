from comparisons.selectors.published import published_figures
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
            state = "comparable" if f["comparable"] else "NOT COMPARABLE: " + "; ".join(f["causes"])
            lines.append(f"{f['id']:>4}  {f['run_id']} {f['score']:.3f} (n={f['n']}) shown to {f['shown_to']}: {state}")
            for c in f["corrections"]:
                now = (
                    f"{c['comparable_score']:.3f} on n={c['comparable_n']}"
                    if c["comparable_score"] is not None
                    else c["unresolved"]
                )
                lines.append(f"      corrected: {c['shown_score']:.3f} → {now} ({c['cause']})")
        lines.append(
            f"{len(p['figures'])} figure(s), {p['flagged']} flagged, {p['uncorrected']} flagged without a correction"
        )
        return "\n".join(lines)
