"""Series keyed by (dataset hash, evaluator config hash): breaks, their explanation, backfill."""

import pytest

from tests.comparisons.support import build_judge_series, build_series, run_command

pytestmark = pytest.mark.django_db


def test_series_breaks_where_dataset_or_evaluator_changes(tmp_path):
    v = build_series(tmp_path)
    out = run_command("series", "--dataset", "support")
    (line,) = out["lines"]
    assert line["system"] == "rag-v2"
    segs = line["segments"]
    assert [[p["run_id"] for p in s["points"]] for s in segs] == [["r1", "r2"], ["r3"], ["r4"], ["r5"]]
    assert [(s["version"], s["examples"], s["evaluator_config_hash"]) for s in segs] == [
        (1, 10, "sha256:cfg1"),
        (2, 10, "sha256:cfg1"),
        (3, 12, "sha256:cfg1"),
        (3, 12, "sha256:cfg2"),
    ]
    # Graded by the span rule: r1 5/10: under v1 r2's q-0001 answer ("fact corrected") is wrong.
    assert [p["score"] for s in segs for p in s["points"]] == [0.5, 0.6, 0.8, 0.75, 10 / 12]
    b1, b2, b3 = line["breaks"]
    assert (b1["after_run"], b1["before_run"], b1["changed"]) == ("r2", "r3", ["dataset_hash"])
    assert b1["dataset"] == {
        "from": v["v1"]["dataset_hash"],
        "to": v["v2"]["dataset_hash"],
        "from_version": 1,
        "to_version": 2,
        "from_examples": 10,
        "to_examples": 10,
        "added": 0,
        "removed": 0,
        "modified": 1,
        "unchanged": 9,
    }
    assert b1["text"] == "dataset v1 → v2: +0 added, −0 removed, ~1 modified (10 → 10 examples)"
    assert b2["changed"] == ["dataset_hash"] and b2["dataset"]["added"] == 2
    assert b2["text"] == "dataset v2 → v3: +2 added, −0 removed, ~0 modified (10 → 12 examples)"
    assert b3["changed"] == ["evaluator_config_hash"]
    assert b3["text"] == "evaluator config sha256:cfg1 → sha256:cfg2"
    assert all(s["backfilled"] == [] for s in segs)


def test_backfill_rescores_where_inputs_resolve(tmp_path):
    build_series(tmp_path)
    out = run_command("series", "--dataset", "support", "--backfill")
    segs = out["lines"][0]["segments"]
    # r1 and r2 onto v2: the relabelled q-0001 is re-graded by its span rule against the new expected.
    assert [(b["run_id"], b["resolved"], b["score"], b["n"], b["regraded_by_rule"]) for b in segs[1]["backfilled"]] == [
        ("r1", True, 0.6, 10, 1),
        ("r2", True, 0.7, 10, 1),
    ]
    # r3 onto v3 does not resolve: it never answered the two added questions.
    assert [(b["run_id"], b["resolved"], b["score"], b["missing_answers"]) for b in segs[2]["backfilled"]] == [
        ("r3", False, None, 2)
    ]
    # No backfill across an evaluator change.
    assert segs[3]["backfilled"] == []


def test_series_system_filter_and_unknown(tmp_path):
    build_series(tmp_path)
    assert run_command("series", "--dataset", "support", "--system", "rag-v2")["systems"] == ["rag-v2"]
    out = run_command("series", "--dataset", "support", "--system", "nope", expect=2)
    assert out["error"] == "no runs of system(s) 'nope' on dataset 'support'"
    out = run_command("series", "--dataset", "nope", expect=2)
    assert out["error"] == "unknown dataset 'nope'"


def _run_a_backfill():
    (seg,) = run_command("series", "--dataset", "support", "--backfill")["lines"][0]["segments"][1:]
    (bf,) = seg["backfilled"]
    assert bf["run_id"] == "run-a"
    return bf


EXPECTED_CHANGED = "the question's expected answer changed and no verdict on the new expected exists"


def test_backfill_of_judge_questions_without_a_passing_judge_says_so(tmp_path):
    build_judge_series(tmp_path, calibrate=False)
    bf = _run_a_backfill()
    # The human labels were the run's grades; backfill re-grades judge questions only by a gated judge.
    assert (bf["resolved"], bf["score"], bf["n"], bf["ungradable"], bf["rescored_by"]) == (False, None, 0, 12, [])
    assert bf["not_rescored"] == [
        {"qid": f"q-{i:04d}", "reason": EXPECTED_CHANGED if i == 3 else "no judge version passes its gate"}
        for i in range(12)
    ]


def test_backfill_rescores_judge_questions_with_the_gated_judge(tmp_path, django_capture_on_commit_callbacks):
    from annotation.models import Run
    from calibration.selectors.grades import judge_rescore
    from calibration.services.grading import grading_start
    from tests.calibration.world import judge_truth

    judge = build_judge_series(tmp_path, calibrate=True)
    bf = _run_a_backfill()
    never = f"the answer was never graded by span-judge v1; run grade_run run-a --judge-version {judge.pk}"
    assert (bf["resolved"], bf["n"], bf["rescored_by"]) == (False, 0, [])
    assert bf["not_rescored"] == [
        {"qid": f"q-{i:04d}", "reason": EXPECTED_CHANGED if i == 3 else never} for i in range(12)
    ]

    with django_capture_on_commit_callbacks(execute=True):
        grading_start(judge_version_id=judge.pk, run_id="run-a", run_now=True)
    bf = _run_a_backfill()
    # 11 re-scored by the judge (q-0004's record changed, but not what the judge reads); q-0003 cannot be.
    assert (bf["resolved"], bf["score"], bf["n"], bf["ungradable"]) == (False, None, 11, 1)
    assert bf["rescored_by"] == [{"judge_version": judge.pk, "judge": "span-judge v1", "n": 11}]
    assert bf["not_rescored"] == [{"qid": "q-0003", "reason": EXPECTED_CHANGED}]
    # The verdicts counted are the judge's, not the human labels (which differ on q-0001 and q-0011).
    rescored = judge_rescore(Run.objects.get(run_id="run-a"), {f"q-{i:04d}" for i in range(12) if i != 3})
    assert rescored.verdicts == {f"q-{i:04d}": (judge_truth(i) == "correct", judge.pk) for i in range(12) if i != 3}
    assert sum(ok for ok, _ in rescored.verdicts.values()) == 8


def test_series_text_names_the_questions_backfill_cannot_rescore(tmp_path):
    import io

    from django.core.management import call_command

    build_judge_series(tmp_path, calibrate=False)
    out = io.StringIO()
    call_command("series", "--dataset", "support", "--backfill", stdout=out)
    lines = out.getvalue().splitlines()
    assert "    2026-06-07T02:00  run-a                          not resolvable (0 unanswered, 12 ungradable)" in lines
    assert "      not re-scored q-0000: no judge version passes its gate" in lines
    assert f"      not re-scored q-0003: {EXPECTED_CHANGED}" in lines
    assert sum(line.startswith("      not re-scored ") for line in lines) == 12
