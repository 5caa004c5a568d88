import json
from pathlib import Path

from calibration.selectors.judges import judge_version_get
from calibration.selectors.langfuse_scores import langfuse_scores
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError

FORMATS = ("langfuse",)


class Command(EvalCommand):
    help = (
        "Export a judge version's grades as another tool's scores: --format langfuse writes the Langfuse "
        "score-create payloads (POST /api/public/scores), one a line, for the answers imported from Langfuse."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--judge-version", required=True)
        parser.add_argument("--format", default="langfuse", help="langfuse (the only one so far)")
        parser.add_argument("--run", help="only this run's grades (default: every run the version graded)")
        parser.add_argument("--output", "-o", help="write the JSON Lines here instead of stdout")

    def run(self, **o):
        if o["format"] not in FORMATS:
            raise ServiceError(
                f"unknown scores format {o['format']!r}; one of {', '.join(FORMATS)}",
                [Problem(f"must be one of {', '.join(FORMATS)}", field="format")],
            )
        if o.get("json") and not o.get("output"):
            raise ServiceError("--json prints a summary; give --output FILE for the scores themselves")
        payloads, summary = langfuse_scores(version=judge_version_get(o["judge_version"]), run_id=o.get("run"))
        text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in payloads)
        if o.get("output"):
            Path(o["output"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
        return {**summary.as_dict(), "format": o["format"], "output": o.get("output")}, 0

    def handle(self, *args, **options):
        # The scores went to stdout: the summary goes to stderr unless --json (which needs --output).
        payload, _code = self.run_or_exit(**options)
        if options.get("json"):
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        skipped = payload["skipped"]
        where = f" written to {payload['output']}" if payload["output"] else ""
        self.stderr.write(
            f"{payload['scores']} scores of {', '.join(payload['runs'])}{where}; left out: {skipped['no_trace']} "
            f"answers with no Langfuse trace, {skipped['invalid']} verdicts the judge could not give"
        )
