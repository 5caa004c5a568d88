from annotation.selectors.datasets import dataset_get, version_get
from annotation.selectors.gold import stale_gold
from annotation.selectors.stale_history import stale_history
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Gold labels whose gold_text no longer appears in the live corpus; exit 1 if any."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--version", dest="ref", help="hash (or prefix) or number; default the latest")
        parser.add_argument(
            "--history",
            action="store_true",
            help="the stale share in every corpus state the version has lived through instead of the check",
        )

    def run(self, **o):
        version = version_get(dataset_get(o["dataset"]), o.get("ref"))
        if o.get("history"):
            history = stale_history(version)
            return history, (1 if history["history"][-1]["stale"] else 0)
        report = stale_gold(version)
        return report, (1 if report["stale"] else 0)

    def text(self, p):
        if "history" in p:
            lines = [f"{p['dataset']} v{p['version']}: {p['checked']} gold labels checked in each corpus state"]
            lines += [
                f"  {h['began'][:19]} corpus {h['corpus_state']}: {h['stale']} stale ({h['stale_share']:.1%})"
                for h in p["history"]
            ]
            return "\n".join(lines)
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
