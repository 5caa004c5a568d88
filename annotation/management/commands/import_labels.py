from annotation.services.labels import labels_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = ("Import human grades (JSON Lines). A line that would change an existing label is refused unless "
            "--replace is given with --reason (kept in the label history); answers in a labelling queue are "
            "labelled there, never by import. Unknown annotators are created with the annotator role, no password.")

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--replace", action="store_true",
                            help="replace labels whose verdict or rationale the file changes (needs --reason)")
        parser.add_argument("--reason", default="", help="why the labels are replaced (kept in the label history)")

    def run(self, **o):
        return labels_import(path=o["file"], replace=o["replace"], reason=o["reason"], create_users=True).as_dict(), 0

    def text(self, p):
        users = p["users_created"]
        created = (f"; created {len(users)} user account{'s' if len(users) != 1 else ''} with the annotator role and "
                   f"no password: {', '.join(users)}") if users else ""
        return f"{p['labels']} labels: {p['created']} new, {p['replaced']} replaced, {p['unchanged']} unchanged{created}"
