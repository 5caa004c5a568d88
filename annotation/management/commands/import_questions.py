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

        for name, what in (
            ("qid", "the qid (langsmith: a metadata key; hf: a column)"),
            ("question", "the question (langsmith: an inputs key; hf: a column)"),
            ("expected", "the expected answer (langsmith: an outputs key; hf: a column)"),
            ("context", "the gold text (hf: a column)"),
            ("stratum", "the stratum (langsmith: a metadata key; hf: a column)"),
        ):
            parser.add_argument(f"--{name}-key", help=f"where a foreign file holds {what}")
        parser.add_argument(
            "--keep-unmapped", action="store_true", help="hf: keep a column no field maps as the record's own key"
        )

    def run(self, **o):
        def write(path):
            return questions_import(
                path=path, dataset_name=o["dataset"], discard_working_copy=o["discard_working_copy"]
            ).as_dict()

        keys = {k: o[f"{k}_key"] for k in ("qid", "question", "expected", "context", "stratum") if o[f"{k}_key"]}
        options = BridgeOptions(
            dataset=o["dataset"], stratum_default=o["stratum_default"], keys=keys, keep_unmapped=o["keep_unmapped"]
        )
        return bridged_import(kind="questions", fmt=o["format"], path=o["file"], options=options, write=write), 0

    def text(self, p):
        state = "new version" if p["created"] else "unchanged, same as the latest version"
        return (
            f"{p['dataset']} v{p['version']} {p['dataset_hash']} ({state}): {p['examples']} examples; "
            f"added {p['added']}, removed {p['removed']}, modified {p['modified']}, unchanged {p['unchanged']}"
            + not_mapped_text(p)
        )
