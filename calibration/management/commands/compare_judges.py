from calibration.selectors.judge_compare import judges_compare
from calibration.selectors.judges import judge_version_get
from evalapp.commands import EvalCommand


def _ci(ci) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "undefined"


def _fig(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


class Command(EvalCommand):
    help = "Judge version B against version A on their shared calibration sample (exit 2 when they share none)."

    def add_command_arguments(self, parser):
        parser.add_argument("a", help="judge version A (the baseline)")
        parser.add_argument("b", help="judge version B")

    def run(self, **o):
        return judges_compare(judge_version_get(o["a"]), judge_version_get(o["b"])), 0

    def text(self, p):
        return "\n".join(
            [
                f"judge version {p['judge_version_b']} against {p['judge_version_a']} on sample {p['sample']}"
                f" (runs {p['run_b']} and {p['run_a']}): n {p['n']}",
                f"agreement with the humans: A {p['agreement_a']:.3f}  B {p['agreement_b']:.3f}  "
                f"B - A {p['diff_points']:+.1f} points  95% CI {_ci(p['ci95'])}",
                f"only A right {p['a_only']}  only B right {p['b_only']}  McNemar p {p['mcnemar_p']:.4f}",
                f"kappa: A {_fig(p['kappa_a'])} {_ci(p['kappa_a_ci95'])}  B {_fig(p['kappa_b'])} "
                f"{_ci(p['kappa_b_ci95'])}  B - A {_fig(p['kappa_diff'])} {_ci(p['kappa_diff_ci95'])}",
            ]
        )
