"""Gate figures beyond agreement: length bias with an interval."""

from typing import cast

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation.models import Dataset
from calibration.models import CalibrationRun, JudgeVersion, Measurement, Verdict
from calibration.selectors.gates import GATE_WITHHELD, judge_gate
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_draw
from evalstats.length_bias import length_pass_gap
from tests.calibration.world import load_world

pytestmark = pytest.mark.django_db


def _measured_with_verdicts(tmp_path, verdict_of):
    """A 40-answer world whose answer i is padded by i characters; every item judged by `verdict_of(i)`."""
    load_world(tmp_path / "world", n=40, markers={i: "x" * i for i in range(40)})
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=40, seed=7)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=40)
    items = list(sample.items.select_related("answer"))
    Verdict.objects.bulk_create(
        [
            Verdict(
                run=run,
                item=item,
                verdict=verdict_of(int(item.answer.qid[2:])),
                human_verdict=item.answer.final_verdict,
            )
            for item in items
        ]
    )
    Measurement.objects.create(
        judge_version=version,
        run=run,
        n=40,
        labels=["correct", "incorrect"],
        confusion=[[20, 0], [0, 20]],
        measured_at=timezone.now(),
    )
    cache.clear()
    return version, items


def test_gate_length_bias_is_the_gap_among_human_correct_answers(tmp_path, settings):
    settings.JUDGE_LENGTH_BIAS_WARN_POINTS = 10.0
    # The judge passes only answers padded by 20 characters or more (22 + 1 + 20 = 43 characters).
    version, items = _measured_with_verdicts(tmp_path, lambda i: "correct" if i >= 20 else "incorrect")
    correct = sorted((len(it.answer.answer), it.pk) for it in items if it.answer.final_verdict == "correct")
    # Human-correct: i % 3 != 0 and i % 10 != 1, of 0..39 -> 23 answers; quarters of 5.
    assert len(correct) == 23
    gate = judge_gate(version)
    lb = gate["length_bias"]
    # Shortest five are i = 2, 4, 5, 7, 8 (none pass); longest five i = 32, 34, 35, 37, 38 (all pass).
    assert (lb["statistic"], lb["n"], lb["n_short"], lb["n_long"]) == (100.0, 23, 5, 5)
    assert lb["method"] == "percentile bootstrap over items"
    expected = length_pass_gap(
        [c[0] for c in correct], [1 if c[0] >= 43 else 0 for c in correct], [True] * 23, iters=2000, seed=7
    )
    assert lb["ci95"] == expected.ci95 == [100.0, 100.0]
    assert (
        lb["warning"]
        == expected.warning
        == (
            "the judge passes the longest quarter of correct answers 100.0 points more often than the shortest "
            "(95% interval 100.0 to 100.0): it rewards length"
        )
    )
    assert lb["warning"] not in gate["warnings"]  # a figure beside the decision, not part of it


def test_a_judge_blind_to_length_has_no_warning(tmp_path):
    version, _items = _measured_with_verdicts(tmp_path, lambda i: "correct")
    lb = judge_gate(version)["length_bias"]
    assert (lb["statistic"], lb["ci95"], lb["warning"]) == (0.0, [0.0, 0.0], None)


def test_unmeasured_gate_has_no_length_bias_and_blind_viewers_never_see_it():
    from tests.factories import JudgeVersionFactory

    assert judge_gate(cast(JudgeVersion, JudgeVersionFactory()))["length_bias"] is None
    assert "length_bias" in GATE_WITHHELD


def test_a_closed_run_keeps_its_length_bias_and_the_gate_reads_it_without_drawing_again(world, run_inline, monkeypatch):
    """Closing a calibration works the length bias out once and keeps it on the measurement: the gate (page and
    API alike) then reads it from the row, without the 2,000 draws, on any process and after any cache loss."""
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    run = run_inline(version, size=30)
    correct = sorted(
        (v.item_id, len(v.item.answer.answer), v.verdict == "correct")
        for v in Verdict.objects.filter(run=run, human_verdict="correct").select_related("item__answer")
    )
    expected = length_pass_gap(
        [c[1] for c in correct], [int(c[2]) for c in correct], [True] * len(correct), iters=2000, seed=run.sample.seed
    )
    kept = Measurement.objects.get(run=run).length_bias
    assert kept == {
        "statistic": expected.statistic,
        "ci95": expected.ci95,
        "method": "percentile bootstrap over items",
        "n": len(correct),
        "n_short": len(correct) // 4,
        "n_long": len(correct) // 4,
        "reason": None,
    }

    def no_drawing(*args, **kwargs):
        raise AssertionError("the kept figure is drawn again")

    monkeypatch.setattr("calibration.selectors.reliability.length_pass_gap", no_drawing)
    cache.clear()
    assert judge_gate(version)["length_bias"] == {**kept, "warning": expected.warning}


def test_a_kept_length_bias_is_worded_with_the_warning_setting_of_the_reading(tmp_path, settings):
    version, _items = _measured_with_verdicts(tmp_path, lambda i: "correct")
    kept = {
        "statistic": 30.0,
        "ci95": [12.5, 47.5],
        "method": "percentile bootstrap over items",
        "n": 23,
        "n_short": 5,
        "n_long": 5,
        "reason": None,
    }
    Measurement.objects.filter(judge_version=version).update(length_bias=kept)
    settings.JUDGE_LENGTH_BIAS_WARN_POINTS = 10.0
    assert judge_gate(version)["length_bias"] == {
        **kept,
        "warning": "the judge passes the longest quarter of correct answers 30.0 points more often than the "
        "shortest (95% interval 12.5 to 47.5): it rewards length",
    }
    settings.JUDGE_LENGTH_BIAS_WARN_POINTS = 40.0
    assert judge_gate(version)["length_bias"] == {**kept, "warning": None}
    assert Measurement.objects.get(judge_version=version).length_bias == kept  # read, never written back
