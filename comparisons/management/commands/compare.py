from comparisons.selectors.compare import compare_runs
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = (
        "Compare run B with run A on the questions both answered and both scored: the paired gap with "
        "its interval, the naive interval beside it, discordant counts, regressions, and the verdict. "
        "With --fail-on-regression, exit 1 when a stratum's interval lies wholly below zero."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("run_a", metavar="RUN_A")
        parser.add_argument("run_b", metavar="RUN_B")
        parser.add_argument("--iters", type=int, default=10_000, help="bootstrap draws, 1..100000 (default 10000)")
        parser.add_argument("--seed", type=int, default=0, help="0..4294967295 (default 0)")
        parser.add_argument(
            "--band-runs",
            default="",
            help="comma-separated repeat runs of an unchanged system for the run-to-run band "
            "(default: repeats of A, else of B, found by their pinned fields)",
        )
        parser.add_argument(
            "--no-stale-check", action="store_true", help="skip the stale-gold check of the runs' dataset versions"
        )
        parser.add_argument(
            "--no-strata",
            action="store_true",
            help="skip the per-stratum gaps (per_stratum is null): saves reading every "
            "question's stratum on very large sets",
        )
        parser.add_argument(
            "--fail-on-regression",
            action="store_true",
            help="exit 1 when any stratum's 95%% interval lies wholly below zero (stratum_regressions; for CI)",
        )

    def run(self, **o):
        if o["fail_on_regression"] and o["no_strata"]:
            raise ServiceError(
                "bad comparison options",
                [Problem("--fail-on-regression needs the per-stratum gaps; drop --no-strata", field="no_strata")],
            )
        band_runs = [r.strip() for r in o["band_runs"].split(",") if r.strip()] or None
        out = compare_runs(
            run_a=o["run_a"],
            run_b=o["run_b"],
            iters=o["iters"],
            seed=o["seed"],
            check_stale=not o["no_stale_check"],
            band_runs=band_runs,
            strata=not o["no_strata"],
        )
        return out, 1 if o["fail_on_regression"] and out["stratum_regressions"] else 0

    def text(self, p):
        a, b = p["run_a"], p["run_b"]
        lines = [f"WARNING: {w}" for w in p["warnings"] if w.startswith("REGRESSION IN")]
        lines += [
            f"B {b['run_id']} ({b['system']}) vs A {a['run_id']} ({a['system']}) on n={p['n']} paired questions",
            f"  A {p['a_score']:.3f}   B {p['b_score']:.3f}   gap {p['diff_points']:+.1f} points",
            f"  paired 95% interval [{p['ci95'][0]:.1f}, {p['ci95'][1]:.1f}] ({p['ci95_method']})   (naive, "
            f"unpaired: [{p['naive_ci95'][0]:.1f}, {p['naive_ci95'][1]:.1f}])   se {p['se_points']:.2f}",
            f"  only B right {p['b_only']}, only A right {p['a_only']}; McNemar exact p {p['mcnemar_p']:.4g}",
            (
                f"  this n resolves gaps of {p['resolvable_gap_points']:.1f} points; a gap of "
                f"{p['detectable_gap_80']:.1f} points is found with 80% power"
                if p["detectable_gap_80"] is not None
                else "  the resolvable gap is unmeasured: no question is answered differently"
            ),
            f"  {p['resolvable_gap_note']}",
            f"  verdict: {p['verdict']['words']}",
            f"  what moved it: {p['attribution']['words']}",
        ]
        if p["band"]:
            bd = p["band"]
            lines.append(f"  run-to-run band {bd['width_points']:.1f} points from {bd['n_runs']} runs ({bd['from']})")
        if p["per_stratum"]:
            lines.append("  per stratum:")
            for name, s in p["per_stratum"].items():
                lines.append(
                    f"    {name:24} n={s['n']:<6} {s['diff_points']:+6.1f} [{s['ci95'][0]:.1f}, {s['ci95'][1]:.1f}]"
                    f"  +{s['b_only']}/-{s['a_only']}  p {s['mcnemar_p']:.3g}"
                    + ("  REGRESSION" if name in p["stratum_regressions"] else "")
                )
        for name, c in p.get("criteria", {}).items():
            if c.get("diff") is not None:
                ci = f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}]" if c["ci95"] else f"(no interval: {c['reason']})"
                lines.append(
                    f"  criterion {name}: A {c['mean_a']:.2f}  B {c['mean_b']:.2f}  diff {c['diff']:+.2f} {ci} "
                    f"on n={c['n']} (+{c['improved']}/-{c['worsened']})"
                )
            rule = c.get("pass_rule")
            if rule and rule.get("n"):
                lines.append(
                    f"  criterion {name} {rule['rule']}: A {rule['a_score']:.3f}  B {rule['b_score']:.3f}  "
                    f"gap {rule['diff_points']:+.1f} points [{rule['ci95'][0]:.1f}, {rule['ci95'][1]:.1f}]"
                )
        if p["regressions"]:
            shown = ", ".join(p["regressions"][:20])
            more = f" … (+{len(p['regressions']) - 20})" if len(p["regressions"]) > 20 else ""
            lines.append(f"  regressions ({len(p['regressions'])}): {shown}{more}")
        lines += [f"  WARNING: {w}" for w in p["warnings"] if not w.startswith("REGRESSION IN")]
        return "\n".join(lines)
