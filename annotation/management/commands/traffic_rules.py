from annotation.selectors.datasets import dataset_get
from annotation.selectors.traffic import traffic_rules
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "List a dataset's traffic rules in precedence order (highest priority first, then the oldest)."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)

    def run(self, **o):
        rules = [{**r, "created_at": r["created_at"].isoformat()} for r in traffic_rules(dataset_get(o["dataset"]))]
        return {"dataset": o["dataset"], "rules": rules}, 0

    def text(self, p):
        if not p["rules"]:
            return f"{p['dataset']}: no traffic rules"
        return "\n".join(
            f"{r['id']}\t{r['priority']}\t{r['kind']}\t{r['pattern']}\t-> {r['stratum']}" for r in p["rules"]
        )
