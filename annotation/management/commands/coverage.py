from annotation.selectors.datasets import dataset_get
from annotation.selectors.traffic import coverage_report
from annotation.services.traffic_proposals import traffic_propose
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = (
        "Each stratum's share of production traffic beside its share of the labelled set and of the budget, "
        "the expected count in a sample of n, and (--propose K) a stratified sample of traffic to tag."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--n", type=int, help="the sample size (default: the labelled set's size)")
        parser.add_argument("--propose", type=int, metavar="K", help="add K traffic questions to the tagging list")
        parser.add_argument("--seed", type=int, default=0)

    def run(self, **o):
        if o["n"] is not None and o["n"] < 0:
            raise ServiceError("n must not be negative", [Problem(f"{o['n']} is negative", field="n")])
        proposed = []
        if o["propose"] is not None:
            proposed = traffic_propose(dataset_name=o["dataset"], k=o["propose"], seed=o["seed"])
        report = coverage_report(dataset_get(o["dataset"]), n=o["n"])
        return {**report, "proposed": proposed}, 0

    def text(self, p):
        lines = [f"{p['dataset']}: {p['traffic_total']} asked, n = {p['n']}"]
        lines.append("stratum\ttraffic\tset\tbudget\texpected in n")
        for s in p["strata"]:
            lines.append(
                f"{s['stratum']}\t{_pct(s['traffic_share'])}\t{_pct(s['set_share'])}\t{_pct(s['budget_share'])}\t"
                f"{s['expected_in_sample'] if s['expected_in_sample'] is not None else '—'}"
                + ("\trounds to none" if s["rounds_to_none"] else "")
            )
        u = p["unclassified"]
        lines.append(f"unclassified\t{_pct(u['share'])} ({u['count']} asked)")
        lines.extend(f"warning: {w}" for w in p["warnings"])
        lines.extend(f"proposed {q['qid']} ({q['stratum']}): {q['question']}" for q in p["proposed"])
        return "\n".join(lines)


def _pct(share):
    return "—" if share is None else f"{100 * share:.1f}%"
