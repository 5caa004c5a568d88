from comparisons.selectors.failures import (
    FAILURE_CATEGORIES,
    FAILURE_LABELS,
    failure_attribution,
)
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Why a run's failing answers failed: gold chunk not retrieved; retrieved at rank r but not in the "
        "prompt; in the prompt and still wrong. Counts per stratum."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("run_id", metavar="RUN")
        parser.add_argument("--stratum", default="")
        parser.add_argument("--limit", type=int, default=None, help="list at most this many failures (--json)")
        parser.add_argument(
            "--criterion",
            default="",
            help="fail an answer by this criterion's pass rule on its final human value instead of its grade",
        )

    def run(self, **o):
        return (
            failure_attribution(
                o["run_id"], stratum=o["stratum"] or None, limit=o["limit"], criterion=o["criterion"] or None
            ),
            0,
        )

    def text(self, p):
        by = f" on {p['criterion']}" if p["criterion"] else ""
        lines = [
            f"run {p['run']['run_id']}: {p['failing']} failing{by} of {p['scored']} scored ({p['answered']} answered)"
        ]
        for c in FAILURE_CATEGORIES:
            lines.append(f"  {FAILURE_LABELS[c]:40} {p['counts'][c]}")
        if p["ranks_not_in_prompt"]:
            lines.append(
                "  retrieved but not in the prompt, by rank: "
                + ", ".join(f"r{r}: {n}" for r, n in p["ranks_not_in_prompt"].items())
            )
        for s, row in p["per_stratum"].items():
            lines.append(
                f"  {s:24} failing {row['failing']}/{row['scored']}  "
                + "  ".join(f"{c} {row['counts'][c]}" for c in FAILURE_CATEGORIES)
            )
        if p["disputed_left_out"]["n"]:
            lines.append(f"  {p['disputed_left_out']['words']}")
        return "\n".join(lines)
