"""The demo's judge: a span judge calibrated on the demo's labelled answers when the demo is seeded, so the
judge pages have a gate, its evidence and disagreements on first start. Offline: the span rule needs no
model and no network. Like the rest of the demo, only what is missing is made: a judge of that name that
exists keeps its settings, and a version that has a finished calibration is not calibrated again.
"""

from __future__ import annotations

from annotation.services.demo import DATASET
from calibration.models import CalibrationRun, Judge, JudgeVersion
from calibration.selectors.gates import judge_gate
from calibration.services.calibration import calibration_run_here, calibration_start
from calibration.services.judges import config_hash, judge_version_create

JUDGE = "stdlib-span"
BACKEND = "span"
THRESHOLD = 0.7
SAMPLE = 100
SEED = 0


def _demo_version(judge: Judge | None) -> tuple[JudgeVersion | None, bool]:
    """The demo's version (created with its judge when there is no judge of that name), and whether it was made."""
    if judge is None:
        version, _ = judge_version_create(judge_name=JUDGE, backend=BACKEND, threshold=THRESHOLD)
        return version, True
    digest = config_hash(backend=BACKEND, model="", prompt_template="", params={}, rubric="")
    return judge.versions.filter(config_hash=digest).first(), False


def demo_judge_seed() -> dict:
    """Create the demo judge and calibrate it on the demo dataset, each only if missing; report what is there."""
    judge = Judge.objects.filter(name=JUDGE).first()
    version, created = _demo_version(judge)
    if version is None:
        # A judge of this name the team made themselves, without the demo's configuration: theirs, untouched.
        return {"judge": JUDGE, "judge_version": None, "created": False, "calibrated": False, "status": None}
    calibrated = False
    if not CalibrationRun.objects.filter(judge_version=version, status="done").exists():
        run, started = calibration_start(
            judge_version_id=version.pk, dataset_name=DATASET, size=SAMPLE, seed=SEED, dispatch=False
        )
        if started:
            calibration_run_here(run_id=run.pk)
            calibrated = True
    gate = judge_gate(version)
    return {
        "judge": JUDGE,
        "judge_version": version.pk,
        "version": version.number,
        "created": created,
        "calibrated": calibrated,
        "status": gate["status"],
        "n": gate["n"],
        "kappa": gate["kappa"],
        "threshold": gate["threshold"],
    }
