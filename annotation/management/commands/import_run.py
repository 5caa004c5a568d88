from annotation.services.runs import run_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import a system run: the run record on the first line, one answer per later line."

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--strict",
            action="store_true",
            help="refuse a run record missing pinned fields or its dataset hash (exit 2) instead of warning",
        )

    def run(self, **o):
        result = run_import(path=o["file"], strict=o["strict"])
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        return result.as_dict(), 0

    def text(self, p):
        return f"run {p['run_id']}: {p['answers']} answers on {p['dataset'] or 'no dataset'} {p['dataset_hash']}"
