import sys

from annotation.selectors.datasets import dataset_get, version_get, version_records
from evalapp.commands import EvalCommand
from evalapp.errors import ServiceError


class Command(EvalCommand):
    help = "Write a dataset version's records as JSON Lines, sorted by qid (canonical JSON: re-importing gives the same hash)."
    json_option = False

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--version", dest="ref", help="hash (or prefix) or number; default the latest")
        parser.add_argument("--output", "-o", help="file to write instead of stdout")

    def handle(self, *args, **o):
        try:
            version = version_get(dataset_get(o["dataset"]), o.get("ref"))
        except ServiceError as exc:
            self.stderr.write(f"error: {exc}")
            sys.exit(exc.code)
        if o.get("output"):
            with open(o["output"], "w", encoding="utf-8") as out:
                for _qid, text in version_records(version):
                    out.write(text + "\n")
            return
        for _qid, text in version_records(version):
            self.stdout.write(text + "\n")
