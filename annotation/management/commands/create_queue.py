from annotation.services.queues import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_OVERLAP,
    queue_create,
)
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import read_jsonl, read_text_file, require_file


class Command(EvalCommand):
    help = (
        "Create a blind annotation queue over a run (--run, optionally --sample K stratified), or over the "
        '{"run_id", "qid"} lines of --items FILE; prints {"id", "items"}.'
    )

    def add_command_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--run")
        parser.add_argument("--items", help='JSON Lines of {"run_id", "qid"}')
        parser.add_argument("--sample", type=int)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--overlap", type=int, default=DEFAULT_OVERLAP)
        parser.add_argument("--annotator", action="append", default=[], help="a username in the pool (repeatable)")
        parser.add_argument("--rubric-file")
        parser.add_argument("--lease-seconds", type=int, default=DEFAULT_LEASE_SECONDS)
        parser.add_argument(
            "--criterion", action="append", default=[], help="a criterion of the run's dataset to grade (repeatable)"
        )
        parser.add_argument(
            "--tolerance",
            action="append",
            default=[],
            help="NAME=STEPS: an ordinal criterion's values this many ranks apart still agree (repeatable)",
        )

    def run(self, **o):
        items = None
        if o.get("items"):
            path = require_file(o["items"])
            items, problems = [], []
            for _line, obj, problem in read_jsonl(path):
                if problem:
                    problems.append(problem)
                else:
                    items.append(obj)
            if problems:
                raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was written", problems)
        tolerance: dict[str, object] = {}
        for given in o["tolerance"]:
            name, sep, steps = given.partition("=")
            if not sep or not steps.strip().lstrip("-").isdigit():
                raise ServiceError(
                    "cannot create the queue; nothing was written",
                    [Problem(f"{given!r} must be NAME=STEPS (a whole number)", field="tolerance")],
                )
            tolerance[name.strip()] = int(steps)
        rubric = read_text_file(o["rubric_file"], field="rubric-file") if o.get("rubric_file") else ""
        queue = queue_create(
            name=o["name"],
            annotators=o["annotator"],
            overlap=o["overlap"],
            rubric=rubric,
            run_id=o.get("run"),
            items=items,
            sample=o.get("sample"),
            seed=o.get("seed"),
            lease_seconds=o["lease_seconds"],
            criteria=o["criterion"],
            tolerance=tolerance,
        )
        return {"id": queue.pk, "items": queue.items.count()}, 0

    def text(self, p):
        return f"queue {p['id']} with {p['items']} items"
