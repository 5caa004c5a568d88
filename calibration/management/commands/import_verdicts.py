from calibration.services.verdicts import verdicts_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import a judge's verdicts made elsewhere (JSONL {run_id, qid, verdict}) for a replay judge version."

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--judge-version", required=True)

    def run(self, **o):
        return verdicts_import(path=o["file"], judge_version_id=o["judge_version"]).as_dict(), 0

    def text(self, p):
        return f"{p['verdicts']} verdicts for judge version {p['judge_version']}: {p['created']} new, {p['unchanged']} already imported"
