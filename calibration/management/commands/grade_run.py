import argparse
import time

from calibration import services
from calibration.selectors.runs import grading_progress
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = ("Grade a system run's answers with a judge version in the Celery workers; refused (exit 1) unless "
            "the version's gate passes, or --force with --reason (recorded). Answers without a harness score are "
            "then scored by these verdicts in compare, failures and series. With --wait, exit 3 if not done in time.")

    def add_command_arguments(self, parser):
        parser.add_argument("run_id", help="the system run whose answers are graded")
        parser.add_argument("--judge-version", required=True, help="judge version id")
        parser.add_argument("--force", action="store_true", help="grade although the gate is not pass")
        parser.add_argument("--reason", default="", help="why the gate is overridden (required with --force)")
        parser.add_argument("--wait", action="store_true", help="wait until every answer is graded")
        parser.add_argument("--timeout", type=float, default=600, help="seconds --wait waits (default 600)")
        parser.add_argument("--poll", type=float, default=0.5, help=argparse.SUPPRESS)

    def run(self, **o):
        grading = services.grading_start(judge_version_id=o["judge_version"], run_id=o["run_id"], force=o["force"],
                                         reason=o["reason"])
        if not o["wait"]:
            return grading_progress(grading), 0
        deadline = time.monotonic() + o["timeout"]
        while True:
            grading.refresh_from_db()
            progress = grading_progress(grading)
            if grading.status in ("done", "cancelled", "failed"):
                return progress, 0 if grading.status == "done" else 3
            if time.monotonic() >= deadline:
                self.stderr.write(f"still grading after {o['timeout']:g}s: {progress['graded']}/{progress['total']}; "
                                  f"is a worker running? (celery -A evalapp worker)")
                return progress, 3
            if grading.pk in services.stalled_runs_resume().grading:
                self.stderr.write(f"no sign of life from grading {grading.pk}; resumed it")
            time.sleep(o["poll"])

    def text(self, p):
        counts = ", ".join(f"{n} {v}" for v, n in sorted(p["verdicts"].items())) or "no verdicts yet"
        forced = f" (FORCED past gate {p['gate_status']!r}: {p['force_reason']})" if p["forced"] else ""
        return (f"grading {p['grading']} of run {p['run_id']} by judge version {p['judge_version']}{forced}: "
                f"{p['status']}, {p['graded']}/{p['total']} graded: {counts}")
