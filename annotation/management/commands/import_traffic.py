from annotation.services.traffic import traffic_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Import production questions (JSON Lines: question, asked_at, source, metadata), deduplicated against "
        "the set and earlier traffic; rules give them a stratum."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--source", default="", help="where the lines come from, for lines that name none")

    def run(self, **o):
        return traffic_import(path=o["file"], dataset_name=o["dataset"], source=o["source"]).as_dict(), 0

    def text(self, p):
        return (
            f"{p['dataset']}: {p['lines']} lines; added {p['added']} ({p['classified']} classified by rules, "
            f"{p['unclassified']} unclassified), {p['repeats']} repeat(s) of traffic counted, "
            f"{p['in_set']} already in the set (not stored); batch {p['import_batch']}"
        )
