from annotation.services.datasets import strata_set
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = "Set a dataset's strata budget: STRATUM=SHARE percentages that sum to exactly 100."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("shares", nargs="+", metavar="STRATUM=SHARE")

    def run(self, **o):
        shares, problems = {}, []
        for item in o["shares"]:
            stratum, sep, share = item.partition("=")
            if not sep or not stratum:
                why = "the stratum name is missing" if sep else "there is no '='"
                problems.append(Problem(f"{item!r} is not STRATUM=SHARE: {why}", field=item))
            elif stratum in shares:
                problems.append(Problem("given twice", field=stratum))
            else:
                shares[stratum] = share
        if problems:
            raise ServiceError("the strata budget is not valid; nothing was changed", problems)
        budget = strata_set(dataset_name=o["dataset"], shares=shares)
        return {"dataset": o["dataset"], "strata": budget}, 0

    def text(self, p):
        return f"{p['dataset']}: " + ", ".join(f"{k} {v:g}%" for k, v in p["strata"].items())
