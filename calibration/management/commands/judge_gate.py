from calibration.policies import GATE_EXIT
from calibration.selectors.gates import judge_gate
from calibration.selectors.judges import judge_version_get
from evalapp.commands import EvalCommand


def gate_text(p: dict) -> str:
    lines = [f"judge version {p['judge_version']} ({p.get('judge')} v{p.get('version')}): {p['status'].upper()}"]
    if p["status"] == "unmeasured":
        lines.append(p.get("reason", ""))
        return "\n".join(lines)
    kappa = "undefined" if p["kappa"] is None else f"{p['kappa']:.3f}"
    ci = p["kappa_ci95"]
    lines.append(
        f"n {p['n']}  kappa {kappa}"
        + (f"  95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        + f"  threshold {p['threshold']} ({p['policy']})"
    )
    lines.append(
        f"raw agreement {p['raw_agreement']:.3f}  chance {p['chance_agreement']:.3f}  "
        f"always-correct {p['always_correct_agreement']:.3f}  invalid {p.get('invalid', 0)}"
    )
    for name, c in (p.get("criteria") or {}).items():
        lines.append(criterion_text(name, c))
    lines.extend(f"  - {r}" for r in p.get("reasons", []))
    lines.extend(f"  ! {w}" for w in p.get("warnings", []))
    return "\n".join(lines)


def _fig(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def criterion_text(name: str, c: dict) -> str:
    """One line of the gate's text for a criterion: its status and figures."""
    ci = c.get("kappa_ci95")
    weights = f" ({c['weights']})" if c.get("weights") not in (None, "none") else ""
    threshold = "not gated" if c["threshold"] is None else f"threshold {c['threshold']}"
    return (
        f"criterion {name}: {c['status'].upper()}  n {c['n']}  kappa {_fig(c['kappa'])}{weights}"
        + (f"  95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        + f"  alpha {_fig(c['alpha'])}  {threshold}"
    )


class Command(EvalCommand):
    help = "May this judge version be used? Exit 0 pass, 1 fail, 3 unmeasured or stale."

    def add_command_arguments(self, parser):
        parser.add_argument("judge_version")

    def run(self, **o):
        payload = judge_gate(judge_version_get(o["judge_version"]))
        return payload, GATE_EXIT[payload["status"]]

    def text(self, p):
        return gate_text(p)
