from annotation.services.datasets import dataset_publish
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Snapshot the dataset's working copy (with the experts' edits) into a new immutable version."

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--note", default="")

    def run(self, **o):
        return dataset_publish(dataset_name=o["dataset"], note=o["note"]).as_dict(), 0

    def text(self, p):
        state = "published" if p["created"] else "nothing to publish; the working copy equals"
        return (
            f"{p['dataset']} v{p['version']} {p['dataset_hash']} {state}: added {p['added']}, removed {p['removed']}, "
            f"modified {p['modified']}, unchanged {p['unchanged']}"
        )
