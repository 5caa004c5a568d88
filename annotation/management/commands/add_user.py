from annotation.services.users import user_upsert
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Create or update a user with roles; prints the REST token."

    def add_command_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--role",
            action="append",
            default=[],
            dest="roles",
            help="expert, annotator, adjudicator or engineer (repeatable)",
        )
        parser.add_argument("--password")

    def run(self, **o):
        return user_upsert(username=o["username"], roles=o["roles"], password=o.get("password")).as_dict(), 0

    def text(self, p):
        return f"{p['username']}: roles {', '.join(p['roles'])}; token {p['token']}"
