import argparse

from django.conf import settings

from calibration.management.commands.judge_gate import gate_text
from calibration.policies import GATE_EXIT
from calibration.selectors.gates import judge_gate
from calibration.selectors.judges import judge_version_get
from calibration.selectors.runs import calibration_run_progress
from calibration.selectors.samples import sample_left_out
from calibration.services.calibration import (
    CALIBRATION_RUNS,
    DEFAULT_CHUNK,
    calibration_cancel,
    calibration_resume,
    calibration_start,
)
from calibration.services.sweep import run_wait
from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError


class Command(EvalCommand):
    help = (
        "Run a judge version over a stratified sample of human-labelled answers in the Celery workers and "
        "measure agreement. With --wait, print the gate object when done (exit as judge_gate; 3 if still running)."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("judge_version")
        parser.add_argument("--dataset", help="dataset whose labelled answers are sampled")
        parser.add_argument("--sample", type=int, default=100, help="sample size (default 100)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK)
        parser.add_argument(
            "--repeats", type=int, default=1, help="judge each item R times, 2 to 20, for self-consistency (default 1)"
        )
        parser.add_argument("--resample", action="store_true", help="draw a new sample instead of reusing the judge's")
        parser.add_argument("--resume", action="store_true", help="resume this version's unfinished run")
        parser.add_argument("--cancel", action="store_true", help="cancel this version's unfinished run")
        parser.add_argument("--wait", action="store_true", help="wait for the run and print the gate object")
        parser.add_argument("--timeout", type=float, default=600, help="seconds --wait waits (default 600)")
        parser.add_argument("--poll", type=float, default=0.5, help=argparse.SUPPRESS)

    def run(self, **o):
        version = judge_version_get(o["judge_version"])
        if o["resume"] or o["cancel"]:
            run = version.runs.exclude(status="done").order_by("-created_at", "-id").first()
            if run is None:
                raise ServiceError(f"judge version {version.pk} has no unfinished calibration run")
            run = calibration_resume(run_id=run.pk) if o["resume"] else calibration_cancel(run_id=run.pk)
            created = False
        else:
            if not o.get("dataset"):
                raise ServiceError("give --dataset NAME", [Problem("required", field="dataset")])
            run, created = calibration_start(
                judge_version_id=version.pk,
                dataset_name=o["dataset"],
                size=o["sample"],
                seed=o["seed"],
                chunk_size=o["chunk_size"],
                resample=o["resample"],
                repeats=o["repeats"],
            )
        left_out = sample_left_out(run.sample.dataset)
        if left_out["n"]:
            self.stderr.write(f"{left_out['words']} (no final label until an adjudicator settles them)")
        if not o["wait"] or o["cancel"]:
            return {**calibration_run_progress(run), "created": created, "disputed_left_out": left_out}, 0
        last: list[tuple[int, int] | None] = [None]

        def resumed(r):
            self.stderr.write(f"no sign of life from run {r.pk} for {settings.CALIBRATION_STALL_SECONDS}s; resumed it")

        def polled(r):
            progress = calibration_run_progress(r)
            if (progress["done"], progress["errors"]) != last[0] and not o.get("json"):
                self.stderr.write(
                    f"{progress['done']}/{progress['total']} judged, {progress['invalid']} invalid, "
                    f"{progress['errors']} errors"
                    + (f", ETA {progress['eta_seconds']}s" if progress["eta_seconds"] else "")
                )
                last[0] = (progress["done"], progress["errors"])

        waited = run_wait(
            kind=CALIBRATION_RUNS,
            run_id=run.pk,
            timeout=o["timeout"],
            poll=o["poll"],
            on_poll=polled,
            on_resumed=resumed,
        )
        run = waited.run
        progress = calibration_run_progress(run)
        if waited.timed_out:
            self.stderr.write(
                f"still running after {o['timeout']:g}s: {progress['done']}/{progress['total']} done; "
                f"is a worker running? (celery -A evalapp worker)"
            )
            return {**progress, "created": created, "disputed_left_out": left_out}, 3
        payload = {**judge_gate(version), "disputed_left_out": left_out}
        if run.status != "done":
            self.stderr.write(f"calibration run {run.pk} {run.status}: {run.message}")
            return {**payload, "calibration_run": progress}, 3
        return payload, GATE_EXIT[payload["status"]]

    def text(self, p):
        if "judge_version" in p and "status" in p and "config_hash" in p:
            return gate_text(p)
        return (
            f"calibration run {p['run']} of judge version {p['judge_version']}: {p['status']}, "
            f"{p['done']}/{p['total']} judged, {p['invalid']} invalid, {p['errors']} errors"
        )
