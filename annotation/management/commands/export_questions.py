import sys
from pathlib import Path

from annotation.bridges.hf import questions_export
from annotation.selectors.datasets import dataset_get, version_get, version_records
from evalapp.commands import EvalCommand
from evalapp.errors import ServiceError

FORMATS = ("jsonl", "hf")


class Command(EvalCommand):
    help = (
        "Write a dataset version's records as JSON Lines, sorted by qid (canonical JSON: re-importing gives the "
        "same hash); --format hf writes a file datasets.load_dataset reads (--parquet: a Parquet file)."
    )
    json_option = False

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--version", dest="ref", help="hash (or prefix) or number; default the latest")
        parser.add_argument("--output", "-o", help="file to write instead of stdout")
        parser.add_argument("--format", default="jsonl", help=f"one of {', '.join(FORMATS)} (default jsonl)")
        parser.add_argument("--parquet", action="store_true", help="with --format hf: a Parquet file (needs -o)")

    def handle(self, *args, **o):
        try:
            if o["format"] not in FORMATS:
                raise ServiceError(f"unknown questions export format {o['format']!r}; one of {', '.join(FORMATS)}")
            if o["parquet"] and (o["format"] != "hf" or not o.get("output")):
                raise ServiceError("--parquet goes with --format hf and --output FILE (Parquet is not text)")
            version = version_get(dataset_get(o["dataset"]), o.get("ref"))
            if o["format"] == "hf" and o.get("output"):
                rows = questions_export(version=version, path=Path(o["output"]), parquet=o["parquet"])
                self.stderr.write(f"{rows} rows written to {o['output']}")
                return
        except ServiceError as exc:
            self.stderr.write(f"error: {exc}")
            sys.exit(exc.code)
        # The JSON Lines a Hugging Face dataset reads are the records as stored: one format, two names.
        if o.get("output"):
            with open(o["output"], "w", encoding="utf-8") as out:
                for _qid, text in version_records(version):
                    out.write(text + "\n")
            return
        for _qid, text in version_records(version):
            self.stdout.write(text + "\n")
