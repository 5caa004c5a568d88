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
            f"  kappa ({p['weights']} weights) {kappa}, raw agreement {ag['raw_agreement']}",
            f"  Krippendorff's alpha ({multi['metric']}) {multi['krippendorff_alpha']}",
        ]
        if p["pass_rule"]:
            lines.append(f"  pass rule {p['pass_rule']['rule']}: kappa {p['pass_rule']['kappa']}")
        return "\n".join(lines)
