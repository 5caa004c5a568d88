from annotation.selectors.datasets import dataset_get, version_get
from annotation.selectors.gold import stale_gold
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Gold labels whose gold_text no longer appears in the live corpus; exit 1 if any."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--version", dest="ref", help="hash (or prefix) or number; default the latest")

    def run(self, **o):
        version = version_get(dataset_get(o["dataset"]), o.get("ref"))
        report = stale_gold(version)
        return report, (1 if report["stale"] else 0)

    def text(self, p):
        lines = [
            f"{p['checked']} gold labels checked, {len(p['stale'])} stale ({p['stale_share']:.1%}), {len(p['moved'])} moved"
        ]
        lines += [f"  stale {s['qid']} {s['gold_chunk_id']}: {s['reason']}" for s in p["stale"]]
        lines += [f"  moved {m['qid']} {m['gold_chunk_id']} -> {m['now_in']}" for m in p["moved"]]
        lines += [
            f"  extra gold passage(s) of {e['qid']} no longer live: {', '.join(e['chunk_ids'])}"
            for e in p.get("extra_not_live", [])
        ]
        return "\n".join(lines)
