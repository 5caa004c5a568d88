from annotation.selectors.traffic import rule_row
from annotation.services.traffic import traffic_rule_add
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Add a rule that puts matching traffic questions in a stratum, and re-apply the rules "
        "(a stratum assigned by hand is never changed). The highest priority wins; ties go to the oldest rule."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--stratum", required=True)
        kind = parser.add_mutually_exclusive_group(required=True)
        kind.add_argument("--keyword", help="words found in the question (case and punctuation ignored)")
        kind.add_argument("--regex", help="a Python regular expression searched in the question as asked")
        kind.add_argument("--metadata", help="key=value: the metadata's value at key, as text")
        parser.add_argument("--priority", type=int, default=0)

    def run(self, **o):
        kind = next(k for k in ("keyword", "regex", "metadata") if o[k] is not None)
        result = traffic_rule_add(
            dataset_name=o["dataset"], stratum=o["stratum"], kind=kind, pattern=o[kind], priority=o["priority"]
        )
        row = rule_row(result.rule)
        row["created_at"] = row["created_at"].isoformat()
        return {"dataset": o["dataset"], "rule": row, "reclassified": result.reclassified}, 0

    def text(self, p):
        r = p["rule"]
        return (
            f"{p['dataset']}: rule {r['id']} {r['kind']} {r['pattern']!r} -> {r['stratum']} "
            f"(priority {r['priority']}); {p['reclassified']} question(s) reclassified"
        )
