import json

from annotation.services import audit_outcomes, audits
from evalapp.commands import EvalCommand
from evalapp.jsonl import read_text_file


class Command(EvalCommand):
    help = (
        "Relabel audit. Without AUDIT_ID: draw a random sample of a batch of changed labels (by --changed-by/"
        "--run/--since/--until, or a dataset diff's modified questions with --dataset --old --new --run) and "
        "open a blind audit queue for --auditor(s). With AUDIT_ID: report; exit 0 accepted or resolved, "
        "1 drift (kept out of the baseline), 3 blind labels still missing."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("audit_id", nargs="?", help="report on this audit")
        parser.add_argument("--name", default="")
        parser.add_argument("--run", help="the run whose labels (or answers) form the batch")
        parser.add_argument("--changed-by", help="the annotator whose label changes are audited")
        parser.add_argument("--since", help="changes at or after this ISO 8601 time")
        parser.add_argument("--until", help="changes before this ISO 8601 time")
        parser.add_argument("--queue", type=int, help="a queue round: changes made in this queue")
        parser.add_argument("--dataset", help="a dataset version diff batch: the dataset")
        parser.add_argument("--old", help="the old version hash")
        parser.add_argument("--new", help="the new version hash")
        parser.add_argument("--auditor", action="append", default=[], help="a blind second annotator (repeatable)")
        parser.add_argument("--sample", type=int, default=audits.DEFAULT_SAMPLE)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--rubric-file", help="the written guideline shown to the auditors")
        parser.add_argument("--resolve", metavar="NOTE", help="mark a drifted audit resolved, saying how")

    def run(self, **o):
        if o.get("audit_id"):
            audit = audits.audit_get(o["audit_id"])
            if o.get("resolve"):
                audit_outcomes.audit_resolve(audit=audit, user=None, note=o["resolve"])
            report = audits.audit_report(audit=audit)
            return report, audits.audit_exit_code(report)
        rubric = ""
        if o.get("rubric_file"):
            rubric = read_text_file(o["rubric_file"], field="rubric-file")
        audit = audits.audit_create(
            name=o["name"],
            auditors=o["auditor"],
            run_id=o.get("run"),
            changed_by=o.get("changed_by"),
            since=o.get("since"),
            until=o.get("until"),
            dataset=o.get("dataset"),
            old=o.get("old"),
            new=o.get("new"),
            sample=o["sample"],
            seed=o["seed"],
            alpha=o["alpha"],
            rubric=rubric,
            queue=o.get("queue"),
        )
        return audits.audit_summary(audit), 0

    def text(self, p):
        if "status" not in p:
            return (
                f"audit {p['audit']}: {p['sample']} of {p['batch']} changed labels sampled into queue {p['queue']} "
                f"for {', '.join(p['auditors'])}"
            )
        lines = [f"audit {p['audit']} ({p['name']}): {p['status']}, {p['labelled']} of {p['sample']} re-labelled"]
        if "words" in p:
            lines.append(p["words"])
            for d in p["disagreement_items"]:
                lines.append(f"  {d['run_id']} {d['qid']}: {d['original']} -> {d['relabel']} ({d['auditor']})")
        if p["status"] == "drift":
            lines.append("kept out of the baseline until resolved (relabel_audit ID --resolve NOTE)")
        return "\n".join(lines) if p else json.dumps(p)
