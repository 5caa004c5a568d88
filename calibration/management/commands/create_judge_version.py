from pathlib import Path

from calibration.services.judge_criteria import criterion_options
from calibration.services.judges import judge_version_create
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import read_text_file


def _read(path: str | None, field: str) -> str:
    if not path:
        return ""
    p = Path(path)
    if not p.is_file():
        raise ServiceError(f"no such file: {path}", [Problem("not a readable file", field=field)])
    return read_text_file(p, field=field)


class Command(EvalCommand):
    help = "Create (or find) the judge version with this configuration; prints its id and config hash."

    def add_command_arguments(self, parser):
        parser.add_argument("--judge", required=True, help="judge name (a slug); created if new")
        parser.add_argument("--backend", required=True, help="span, extraction, openai or replay")
        parser.add_argument("--model", default="", help="model snapshot the openai backend calls")
        parser.add_argument("--prompt-file", help="prompt template ($question, $gold_text, $expected, $answer)")
        parser.add_argument("--rubric-file", help="grading rubric given to the judge")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="K=V",
            help="backend parameter (repeatable): temperature-free settings such as max_tokens, "
            "or operational ones kept out of the hash: base_url, api_key, timeout, "
            "concurrency, rate_limit, max_attempts",
        )
        parser.add_argument("--threshold", type=float, help="kappa the judge must reach (default 0.7)")
        parser.add_argument("--policy", choices=["point", "lower_bound"], help="compare kappa or its lower 95%% bound")
        parser.add_argument("--min-n", type=int, help="minimum calibrated items (default 30)")
        parser.add_argument(
            "--criterion",
            action="append",
            default=[],
            metavar="NAME[=THRESHOLD]",
            help="a dataset criterion the version scores beside its verdict (repeatable); with a threshold "
            "the gate also needs that criterion's kappa",
        )

    def run(self, **o):
        params, problems = {}, []
        for item in o["param"]:
            key, sep, value = item.partition("=")
            if not sep or not key:
                problems.append(Problem(f"{item!r} is not K=V", field="param"))
            elif key in params:
                problems.append(Problem("given twice", field=f"param {key}"))
            else:
                params[key] = value
        if problems:
            raise ServiceError("bad --param; nothing was written", problems)
        version, created = judge_version_create(
            judge_name=o["judge"],
            backend=o["backend"],
            model=o["model"],
            prompt_template=_read(o.get("prompt_file"), "prompt-file"),
            rubric=_read(o.get("rubric_file"), "rubric-file"),
            params=params,
            threshold=o.get("threshold"),
            policy=o.get("policy"),
            min_n=o.get("min_n"),
            criteria=criterion_options(o["criterion"]) if o["criterion"] else None,
        )
        return {
            "judge_version": version.pk,
            "config_hash": version.config_hash,
            "judge": version.judge.name,
            "version": version.number,
            "created": created,
            **({"criteria": version.criteria} if version.criteria else {}),
        }, 0

    def text(self, p):
        return f"judge version {p['judge_version']} ({p['judge']} v{p['version']}, {p['config_hash']})" + (
            "" if p["created"] else " already existed with this configuration"
        )
