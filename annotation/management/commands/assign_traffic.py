from annotation.services.traffic import traffic_assign
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Put traffic questions (by id) in a stratum by hand; no rule changes them after."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("ids", nargs="+", type=int, metavar="ID")
        parser.add_argument("--stratum", required=True)

    def run(self, **o):
        n = traffic_assign(dataset_name=o["dataset"], ids=o["ids"], stratum=o["stratum"])
        return {"dataset": o["dataset"], "stratum": o["stratum"], "assigned": n}, 0

    def text(self, p):
        return f"{p['dataset']}: {p['assigned']} question(s) assigned to {p['stratum']}"
