from annotation.selectors.criteria import criterion_row
from annotation.services.criteria import criterion_set
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Define a dataset's criterion: binary (correct,incorrect), categorical (unordered values) or ordinal "
        "(values worst first), with an optional pass rule ('>=4', 'in good|fine'). A change is a new version."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("criterion", metavar="CRITERION")
        parser.add_argument("--kind", required=True, help="binary, categorical or ordinal")
        parser.add_argument("--values", default=None, help="V1,V2,… (in order, worst first, for ordinal)")
        parser.add_argument("--pass", dest="pass_rule", default="", help="e.g. '>=4', '> fair', 'in good|fine'")
        parser.add_argument(
            "--guideline", default="", help="what annotators read beside the control (a change is a new version)"
        )

    def run(self, **o):
        values = [v.strip() for v in o["values"].split(",")] if o["values"] is not None else None
        made, status = criterion_set(
            dataset_name=o["dataset"],
            name=o["criterion"],
            kind=o["kind"],
            values=values,
            pass_rule=o["pass_rule"],
            guideline=o["guideline"],
        )
        return {"dataset": o["dataset"], **criterion_row(made), "status": status}, 0

    def text(self, p):
        rule = f", pass {p['pass']}" if p["pass"] else ""
        return f"{p['dataset']}: {p['criterion']} v{p['version']} ({p['status']}): {p['kind']} {','.join(p['values'])}{rule}"
