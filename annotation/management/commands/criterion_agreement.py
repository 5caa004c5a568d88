from annotation.selectors.criterion_agreement import WEIGHTS, criterion_agreement
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Human-human agreement on one criterion of a run's answers: weighted kappa (quadratic by default on an "
        "ordinal scale) per stratum and pair, Krippendorff's alpha, and the pass rule's reading."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--run", required=True)
        parser.add_argument("--criterion", required=True)
        parser.add_argument("--weights", choices=WEIGHTS, default=None, help="default: quadratic if ordinal, else none")
        parser.add_argument("--iters", type=int, default=2000)
        parser.add_argument("--seed", type=int, default=0)

    def run(self, **o):
        return criterion_agreement(
            run_id=o["run"], criterion=o["criterion"], weights=o["weights"], iters=o["iters"], seed=o["seed"]
        ), 0

    def text(self, p):
        ag, multi = p["agreement"], p["multi_rater"]
        kappa = ag["kappa"]  # weighted when the weights are
        lines = [
            f"{p['run']} {p['criterion']} v{p['version']} ({p['kind']} {','.join(p['values'])}): "
            f"{ag['n']} pairs over {p['answers']} answers",
            f"  kappa ({p['weights']} weights) "
            + (
                f"{kappa:.3f}, raw agreement {ag['raw_agreement']:.3f}"
                if kappa is not None
                else f"undefined: {ag['reason']}"
            ),
            f"  Krippendorff's alpha ({multi['metric']}) "
            + (f"{multi['krippendorff_alpha']:.3f}" if multi["krippendorff_alpha"] is not None else "undefined"),
        ]
        if p["pass_rule"]:
            rk = p["pass_rule"]["kappa"]
            lines.append(
                f"  pass rule {p['pass_rule']['rule']}: kappa " + (f"{rk:.3f}" if rk is not None else "undefined")
            )
        return "\n".join(lines)
