import argparse

from calibration.selectors.runs import grading_get, grading_progress
from calibration.services.grading import (
    DEFAULT_CHUNK,
    GRADING_RUNS,
    grading_cancel,
    grading_resume,
    grading_start,
)
from calibration.services.sweep import run_wait
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = (
        "Grade a system run's answers with a judge version in the Celery workers; refused (exit 1) unless "
        "the version's gate passes, or --force with --reason (recorded). Answers without a harness score are "
        "then scored by these verdicts in compare, failures and series. With --wait, exit 3 if not done in time. "
        "--cancel ID stops a grading; --resume ID grades what it has not graded yet."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("run_id", nargs="?", help="the system run whose answers are graded")
        parser.add_argument("--judge-version", help="judge version id")
        parser.add_argument("--force", action="store_true", help="grade although the gate is not pass")
        parser.add_argument("--reason", default="", help="why the gate is overridden (required with --force)")
        parser.add_argument(
            "--chunk-size",
            type=int,
            default=None,
            help=f"answers per worker task (default: sixteen rounds of the judge's concurrency, at least {DEFAULT_CHUNK})",
        )
        parser.add_argument("--cancel", metavar="ID", help="cancel this grading (its id)")
        parser.add_argument("--resume", metavar="ID", help="resume this grading (its id)")
        parser.add_argument("--wait", action="store_true", help="wait until every answer is graded")
        parser.add_argument("--timeout", type=float, default=600, help="seconds --wait waits (default 600)")
        parser.add_argument("--poll", type=float, default=0.5, help=argparse.SUPPRESS)

    def run(self, **o):
        if o["cancel"] and o["resume"]:
            raise ServiceError("give --cancel or --resume, not both", [Problem("not with --resume", field="cancel")])
        if o["cancel"] or o["resume"]:
            grading = grading_get(o["cancel"] or o["resume"])
            if o["cancel"]:
                return grading_progress(grading_cancel(grading_id=grading.pk)), 0
            grading = grading_resume(grading_id=grading.pk)
        else:
            missing = [Problem("required", field=f) for f in ("run_id", "judge_version") if not o.get(f)]
            if missing:
                raise ServiceError("give RUN_ID and --judge-version ID (or --cancel ID / --resume ID)", missing)
            grading = grading_start(
                judge_version_id=o["judge_version"],
                run_id=o["run_id"],
                force=o["force"],
                reason=o["reason"],
                chunk_size=o["chunk_size"],
            )
        if not o["wait"]:
            return grading_progress(grading), 0

        def resumed(g):
            self.stderr.write(f"no sign of life from grading {g.pk}; resumed it")

        waited = run_wait(
            kind=GRADING_RUNS, run_id=grading.pk, timeout=o["timeout"], poll=o["poll"], on_resumed=resumed
        )
        progress = grading_progress(waited.run)
        if waited.timed_out:
            self.stderr.write(
                f"still grading after {o['timeout']:g}s: {progress['graded']}/{progress['total']}; "
                f"is a worker running? (celery -A evalapp worker)"
            )
            return progress, 3
        if waited.run.status != "done":
            self.stderr.write(f"grading {waited.run.pk} {waited.run.status}: {waited.run.message}")
        return progress, 0 if waited.run.status == "done" else 3

    def text(self, p):
        counts = ", ".join(f"{n} {v}" for v, n in sorted(p["verdicts"].items())) or "no verdicts yet"
        forced = f" (FORCED past gate {p['gate_status']!r}: {p['force_reason']})" if p["forced"] else ""
        return (
            f"grading {p['grading']} of run {p['run_id']} by judge version {p['judge_version']}{forced}: "
            f"{p['status']}, {p['graded']}/{p['total']} graded: {counts}"
        )
