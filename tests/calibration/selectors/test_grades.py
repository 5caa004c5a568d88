"""A system run's grades: the harness score, else the question's rule, then human labels; `judge`-graded
questions count a judge version's verdicts only when its gate passes."""

import pytest

from calibration.selectors.grades import answer_grade, run_grades
from calibration.services.grading import grading_start
from calibration.services.judges import judge_version_create
from tests.calibration.world import human_verdict, judge_truth
from tests.factories import AnswerFactory, DatasetFactory, RunFactory, record, version


def test_judge_verdicts_count_only_from_a_passing_gate(
    world, run_inline, make_user, django_capture_on_commit_callbacks
):
    from annotation.models import Run

    run = Run.objects.get(run_id="run-a")
    humans = {f"q-{i:04d}": human_verdict(i) == "correct" for i in range(60)}
    g = run_grades(run)
    assert (g.scores, g.sources) == (humans, {"human": 60})

    v = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]
    eng = make_user("eng", "engineer")
    with django_capture_on_commit_callbacks(execute=True):
        grading_start(judge_version_id=v.pk, run_id="run-a", force=True, reason="smoke", user=eng, run_now=True)
    # A forced grading over an unmeasured gate is not used: still the human labels.
    g = run_grades(run)
    assert (g.scores, g.sources) == (humans, {"human": 60})

    run_inline(v, size=30)  # the gate now passes (threshold 0.0)
    with django_capture_on_commit_callbacks(execute=True):
        grading_start(judge_version_id=v.pk, run_id="run-a", run_now=True)
    g = run_grades(run)
    assert g.scores == {f"q-{i:04d}": judge_truth(i) == "correct" for i in range(60)}
    assert g.sources == {f"judge:{v.pk}": 60}
    assert answer_grade(run, "q-0001") == (True, f"judge:{v.pk}")  # humans said incorrect; the gated judge counts


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
    assert {
        k: out[k]
        for k in ("judge_version", "run_id", "status", "gate_status", "forced", "force_reason", "total", "graded")
    } == {
        "judge_version": v.pk,
        "run_id": "run-a",
        "status": "queued",
        "gate_status": "unmeasured",
        "forced": True,
        "force_reason": "smoke test before calibrating",
        "total": 60,
        "graded": 0,
    }
    code, _, err = grade("--judge-version", "999999")
    assert code == 2 and "999999" in err


@pytest.mark.django_db
def test_answers_without_harness_score_are_graded_by_rule_then_human_labels():
    v = version(
        DatasetFactory(name="support"),
        [
            record("q-0000", grading="span", expected="30 days"),
            record("q-0001", grading="extraction", expected="2026-05-12"),
            record("q-0002", grading="rubric"),
            record("q-0003", grading="judge"),
            record("q-0004", grading="rubric"),
            record("q-0005", grading="span", expected=None, gold_text=None),  # the rule cannot grade: no reference
            record("q-0006", grading="span", expected="ninety days"),
        ],
    )
    run = RunFactory(run_id="A", dataset=v.dataset, dataset_version=v, dataset_hash=v.dataset_hash)
    answers = {
        "q-0000": "Thirty... no: 30 days.",
        "q-0001": "on 12 May 2026",
        "q-0002": "x",
        "q-0003": "y",
        "q-0004": "z",
        "q-0005": "w",
        "q-0006": "ninety days",
    }
    # Final human labels where two annotators agreed; q-0004's disagree, so it has none yet.
    finals = {"q-0002": "incorrect", "q-0003": "correct"}
    for qid, text in answers.items():
        AnswerFactory(
            run=run, qid=qid, answer=text, correct=False if qid == "q-0006" else None, final_verdict=finals.get(qid, "")
        )

    g = run_grades(run)
    # The harness's own score wins (q-0006 says false although the span rule would say right).
    assert g.scores == {"q-0000": True, "q-0001": True, "q-0002": False, "q-0003": True, "q-0006": False}
    assert g.sources == {"harness": 1, "span": 1, "extraction": 1, "human": 2}
    assert g.ungraded == {"awaiting human label": 1, "rule could not grade and no human label": 1}
    assert g.unscored == {"q-0004", "q-0005"}
    assert answer_grade(run, "q-0000") == (True, "span")
    assert answer_grade(run, "q-0003") == (True, "human")  # judge rule, no gated judge: human final label
    assert answer_grade(run, "q-0004") == (None, None)
    assert answer_grade(run, "q-0006") == (False, "harness")


@pytest.mark.django_db
def test_a_run_score_counts_and_names_its_disputed_answers(tmp_path, make_user):
    from annotation.models import Run
    from tests.annotation.conftest import import_disputed_run

    make_user("ann1", "annotator")
    make_user("ann2", "annotator")
    run = Run.objects.get(run_id=import_disputed_run(tmp_path, n=6, disputed=(1, 4)))
    g = run_grades(run)
    assert (g.n_scored, sorted(g.unscored), sorted(g.disputed)) == (4, ["q-0001", "q-0004"], ["q-0001", "q-0004"])
    assert g.summary() == {
        "answered": 6,
        "scored": 4,
        "score": 1.0,
        "sources": {"human": 4},
        "ungraded": {"awaiting human label": 2},
        "disputed_left_out": {
            "n": 2,
            "answers": ["q-0001", "q-0004"],
            "words": "2 disputed answers left out: q-0001, q-0004",
        },
    }
