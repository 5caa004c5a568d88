from annotation.bridges import BridgeOptions, bridged_import, formats, not_mapped_text
from annotation.bridges.foreign import option_pairs
from annotation.services.label_import import labels_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Import human grades (JSON Lines). A line that would change an existing label is refused unless "
        "--replace is given with --reason (kept in the label history); answers in a labelling queue are "
        "labelled there, never by import. Unknown annotators are created with the annotator role, no password."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace labels whose verdict or rationale the file changes (needs --reason)",
        )
        parser.add_argument("--reason", default="", help="why the labels are replaced (kept in the label history)")
        parser.add_argument(
            "--format",
            default="jsonl",
            help=f"the file's format: {', '.join(formats('labels'))} (default: the project's own JSON Lines)",
        )
        parser.add_argument(
            "--run", help="the system run a foreign file's labels go on (label-studio, langfuse, langsmith)"
        )
        parser.add_argument(
            "--annotator",
            action="append",
            metavar="ID=USERNAME",
            help="the project username of another tool's user (its id or e-mail); repeat for each",
        )

        parser.add_argument(
            "--feedback-key", help="langsmith: the feedback key whose score or value is the verdict (default: correct)"
        )

    def run(self, **o):
        options = BridgeOptions(
            run_id=o["run"],
            annotators=option_pairs(o["annotator"], option="--annotator"),
            keys={"feedback": o["feedback_key"]} if o["feedback_key"] else {},
        )

        def write(path):
            return labels_import(path=path, replace=o["replace"], reason=o["reason"], create_users=True).as_dict()

        return bridged_import(kind="labels", fmt=o["format"], path=o["file"], options=options, write=write), 0

    def text(self, p):
        users = p["users_created"]
        created = (
            (
                f"; created {len(users)} user account{'s' if len(users) != 1 else ''} with the annotator role and "
                f"no password: {', '.join(users)}"
            )
            if users
            else ""
        )
        return (
            f"{p['labels']} labels: {p['created']} new, {p['replaced']} replaced, {p['unchanged']} unchanged{created}"
            + not_mapped_text(p)
        )
