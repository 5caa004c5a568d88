from annotation.selectors.criteria import criteria_list
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "List a dataset's criteria at their latest versions (--all: every version)."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--all", action="store_true", help="every version, oldest first")

    def run(self, **o):
        return {"dataset": o["dataset"], "criteria": criteria_list(o["dataset"], history=o["all"])}, 0

    def text(self, p):
        if not p["criteria"]:
            return f"{p['dataset']}: no criteria (labels are the binary verdict)"
        return "\n".join(
            f"{c['criterion']} v{c['version']}: {c['kind']} {','.join(c['values'])}"
            + (f", pass {c['pass']}" if c["pass"] else "")
            for c in p["criteria"]
        )
