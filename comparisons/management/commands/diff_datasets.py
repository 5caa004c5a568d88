from annotation.selectors.datasets import dataset_get
from annotation.selectors.runs import run_get
from comparisons.selectors.diff import dataset_diff
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "The added / removed / modified / unchanged qids between two versions; with runs, the movement by partition."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("old", metavar="OLD_HASH")
        parser.add_argument("new", metavar="NEW_HASH")
        parser.add_argument("--run-old")
        parser.add_argument("--run-new")

    def run(self, **o):
        dataset = dataset_get(o["dataset"])
        run_old = run_get(o["run_old"]) if o.get("run_old") else None
        run_new = run_get(o["run_new"]) if o.get("run_new") else None
        return dataset_diff(dataset, o["old"], o["new"], run_old=run_old, run_new=run_new), 0

    def text(self, p):
        lines = [f"{p['old']} -> {p['new']}"]
        for part in ("added", "removed", "modified", "unchanged"):
            lines.append(f"  {part:9} {len(p[part])}")
        changed = [f"{k} {len(q)}" for k, q in p["modified_by"].items() if q]
        if changed:
            lines.append(f"  modified by field: {', '.join(changed)}")
        if "movement" in p:
            lines.append(f"  movement {p['movement']}")
            if "reading" in p["movement"]:
                lines.append(f"  {p['movement']['reading']['words']}")
        return "\n".join(lines)
