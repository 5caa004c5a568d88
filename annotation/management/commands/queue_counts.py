from annotation.services.queue_counts import queue_counts_check
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Recount each labelling queue's kept pair counts and label seconds from its labels and compare; exit 1 "
        "if any queue's differ (or are not kept). With --repair they are rewritten from the labels (exit 0)."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--queue", type=int, action="append", help="a queue id (repeatable); default every queue")
        parser.add_argument("--repair", action="store_true", help="rewrite the kept rows of a queue that differs")

    def run(self, **o):
        checks = queue_counts_check(queue_ids=o.get("queue"), repair=o["repair"])
        differing = [c for c in checks if not c.in_step]
        payload = {
            "queues": len(checks),
            "in_step": len(checks) - len(differing),
            "differing": [c.as_dict() for c in differing],
            "repaired": bool(o["repair"]) and bool(differing),
        }
        return payload, (1 if differing and not o["repair"] else 0)

    def text(self, p):
        lines = [f"{p['queues']} queues checked, {p['in_step']} in step with their labels"]
        for d in p["differing"]:
            what = (
                "not kept yet"
                if not d["kept"]
                else f"{d['pairs_differing']} pair counts and {d['seconds_differing']} label seconds differ"
            )
            lines.append(f"  queue {d['queue']} {d['name']!r}: {what}{' (repaired)' if p['repaired'] else ''}")
        return "\n".join(lines)
