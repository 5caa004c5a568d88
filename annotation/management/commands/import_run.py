from annotation.services.runs import run_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import a system run: the run record on the first line, one answer per later line."

    def add_command_arguments(self, parser):
        parser.add_argument("file")

    def run(self, **o):
        return run_import(path=o["file"]).as_dict(), 0

    def text(self, p):
        return f"run {p['run_id']}: {p['answers']} answers on {p['dataset'] or 'no dataset'} {p['dataset_hash']}"
