from comparisons.selectors.restore import restore_drill
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "For every run, whether what it pinned still resolves inside evalapp (dataset version by content hash, "
        "judge version by configuration hash, corpus state); exit 1 if any does not."
    )

    def run(self, **o):
        report = restore_drill()
        return report, (1 if report["failing"] else 0)

    def text(self, p):
        lines = [
            f"{r['run']}: " + "; ".join(f"{x['field']} {x['value']}: {x['why']}" for x in r["problems"])
            for r in p["runs"]
            if not r["ok"]
        ]
        lines.append(f"{p['checked']} run(s) checked, {p['failing']} with a pinned reference that does not resolve")
        return "\n".join(lines)
