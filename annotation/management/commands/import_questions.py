from annotation.services.datasets import questions_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import a labelled question set (JSON Lines) as the dataset's next immutable version."

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--discard-working-copy",
            action="store_true",
            help="drop unpublished working-copy edits (they stay in the audit log)",
        )

    def run(self, **o):
        result = questions_import(
            path=o["file"], dataset_name=o["dataset"], discard_working_copy=o["discard_working_copy"]
        )
        return result.as_dict(), 0

    def text(self, p):
        state = "new version" if p["created"] else "unchanged, same as the latest version"
        return (
            f"{p['dataset']} v{p['version']} {p['dataset_hash']} ({state}): {p['examples']} examples; "
            f"added {p['added']}, removed {p['removed']}, modified {p['modified']}, unchanged {p['unchanged']}"
        )
