"""`judge`-graded questions: a judge version's verdicts count only when its gate passes (issue 4)."""
from calibration.selectors.grades import answer_grade, run_grades
from calibration.services.grading import grading_start
from calibration.services.judges import judge_version_create
from tests.calibration.world import human_verdict, judge_truth


def test_judge_verdicts_count_only_from_a_passing_gate(world, run_inline, make_user, django_capture_on_commit_callbacks):
    from annotation.models import Run

    run = Run.objects.get(run_id="run-a")
    humans = {f"q-{i:04d}": human_verdict(i) == "correct" for i in range(60)}
    g = run_grades(run)
    assert (g.scores, g.sources) == (humans, {"human": 60})

    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]
    eng = make_user("eng", "engineer")
    with django_capture_on_commit_callbacks(execute=True):
        grading_start(judge_version_id=v.pk, run_id="run-a", force=True, reason="smoke", user=eng,
                      run_now=True)
    # A forced grading over an unmeasured gate is not used: still the human labels.
    g = run_grades(run)
    assert (g.scores, g.sources) == (humans, {"human": 60})

    run_inline(v, size=30)  # the gate now passes (threshold 0.0)
    with django_capture_on_commit_callbacks(execute=True):
        grading_start(judge_version_id=v.pk, run_id="run-a", run_now=True)
    g = run_grades(run)
    assert g.scores == {f"q-{i:04d}": judge_truth(i) == "correct" for i in range(60)}
    assert g.sources == {f"judge:{v.pk}": 60}
    assert answer_grade(run, "q-0001") == (True, f"judge:{v.pk}")   # humans said incorrect; the gated judge counts


def test_grade_run_command_refuses_an_ungated_judge_and_records_a_forced_grading(world, run_inline):
    """`grade_run` is the command behind POST /api/judge-versions/{id}/grade/: exit 1 while the gate is
    not pass, 2 for --force without a reason; a forced grading is recorded with its reason."""
    import io
    import json

    from django.core.management import call_command

    from calibration.models import GradingRun

    def grade(*args):
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command("grade_run", "run-a", *args, "--json", stdout=out, stderr=err)
            code = 0
        except SystemExit as exc:
            code = exc.code
        return code, (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()

    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]
    code, _, err = grade("--judge-version", str(v.pk))
    assert code == 1 and "gate is 'unmeasured'" in err
    code, _, err = grade("--judge-version", str(v.pk), "--force")
    assert code == 2 and "reason" in err
    assert GradingRun.objects.count() == 0
    code, out, _ = grade("--judge-version", str(v.pk), "--force", "--reason", "smoke test before calibrating")
    assert code == 0
    assert {k: out[k] for k in ("judge_version", "run_id", "status", "gate_status", "forced", "force_reason", "total",
                                "graded")} == {"judge_version": v.pk, "run_id": "run-a", "status": "queued",
                                               "gate_status": "unmeasured", "forced": True,
                                               "force_reason": "smoke test before calibrating", "total": 60, "graded": 0}
    code, _, err = grade("--judge-version", "999999")
    assert code == 2 and "999999" in err
