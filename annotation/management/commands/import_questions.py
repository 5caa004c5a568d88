from annotation.bridges import BridgeOptions, bridged_import, formats, not_mapped_text
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
        parser.add_argument(
            "--format",
            default="jsonl",
            help=f"the file's format: {', '.join(formats('questions'))} (default: the project's own JSON Lines)",
        )
        parser.add_argument(
            "--stratum-default", help="the stratum of a question the foreign file gives none (else it is refused)"
        )

    def run(self, **o):
        def write(path):
            return questions_import(
                path=path, dataset_name=o["dataset"], discard_working_copy=o["discard_working_copy"]
            ).as_dict()

        options = BridgeOptions(dataset=o["dataset"], stratum_default=o["stratum_default"])
        return bridged_import(kind="questions", fmt=o["format"], path=o["file"], options=options, write=write), 0

    def text(self, p):
        state = "new version" if p["created"] else "unchanged, same as the latest version"
        return (
            f"{p['dataset']} v{p['version']} {p['dataset_hash']} ({state}): {p['examples']} examples; "
            f"added {p['added']}, removed {p['removed']}, modified {p['modified']}, unchanged {p['unchanged']}"
            + not_mapped_text(p)
        )
