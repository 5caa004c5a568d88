from annotation.services.runs import labels_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import human grades (JSON Lines); changed verdicts keep their history."

    def add_command_arguments(self, parser):
        parser.add_argument("file")

    def run(self, **o):
        return labels_import(path=o["file"]).as_dict(), 0

    def text(self, p):
        return (f"{p['labels']} labels: {p['created']} new, {p['changed']} changed, {p['unchanged']} unchanged"
                + (f"; created users {', '.join(p['users_created'])}" if p["users_created"] else ""))
