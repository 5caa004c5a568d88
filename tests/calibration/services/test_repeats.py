"""Calibration runs with repeats: every item judged R times, the first judgement its Verdict, the others
RepeatVerdicts, exactly once each through retries and resumes."""

import json
from collections import Counter

import pytest
from django.core.management import call_command

from calibration import tasks
from calibration.backends.rules import SpanBackend
from calibration.backends.runner import Outcome
from calibration.models import CalibrationRun, CalibrationSample, Measurement, RepeatVerdict, Verdict
from calibration.services.calibration import (
    CALIBRATION_RUNS,
    calibration_chunk_judge,
    calibration_start,
    pending_item_ids,
)
from calibration.services.judges import judge_version_create
from evalapp.errors import ServiceError


def version(name="span-judge"):
    return judge_version_create(judge_name=name, backend="span")[0]


FLIPPED = {"q-0001", "q-0002", "q-0004", "q-0008"}  # the items the judge changes its mind on


@pytest.fixture
def flipping(monkeypatch):
    """The span judge, except that its third verdict on a FLIPPED question is the other one; counts calls."""
    calls: Counter = Counter()
    plain = SpanBackend.judge

    def judge(self, item):
        calls[item.qid] += 1
        result = plain(self, item)
        if item.qid in FLIPPED and calls[item.qid] == 3:
            other = "incorrect" if result.verdict == "correct" else "correct"
            return type(result)(verdict=other, raw_output=f"span: {other}")
        return result

    monkeypatch.setattr(SpanBackend, "judge", judge)
    return calls


def test_each_item_is_judged_r_times_and_the_first_is_the_verdict(world, run_inline, flipping):
    once = run_inline(version("once"), size=30)
    run = run_inline(version(), size=30, repeats=3)
    assert (run.status, run.repeats, run.total) == ("done", 3, 30)
    assert Verdict.objects.filter(run=run).count() == 30
    rows = list(RepeatVerdict.objects.filter(run=run).values_list("item_id", "repeat"))
    assert len(rows) == 60 and Counter(r for _, r in rows) == {2: 30, 3: 30}
    # The first judgements are the span judge's, so agreement with the humans is that of a single run.
    a, b = Measurement.objects.get(run=once), Measurement.objects.get(run=run)
    assert (b.n, b.confusion) == (a.n, a.confusion)
    assert Measurement.objects.get(run=once).self_consistency is None
    qids = set(run.sample.items.values_list("answer__qid", flat=True))
    flipped = len(FLIPPED & qids)
    assert flipped > 0
    stored = b.self_consistency
    assert stored is not None
    assert (stored["repeats"], stored["n"]) == (3, 30)
    assert stored["flip_rate"] == pytest.approx(flipped / 30)
    # 30 sample items in the first run and 3 x 30 calls in the second (the counter spans both runs).
    assert sum(flipping.values()) == 30 + 90


def test_a_chunk_judged_twice_writes_no_second_repeat(world, django_capture_on_commit_callbacks, flipping):
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=version().pk, dataset_name="support", size=20, repeats=2)
    items = pending_item_ids(run)
    assert calibration_chunk_judge(run_id=run.pk, item_ids=items) == {"judged": 40, "errors": 0, "transient": 0}
    # A redelivered chunk (its worker died after writing) asks the judge nothing and writes nothing.
    assert calibration_chunk_judge(run_id=run.pk, item_ids=items) == {"judged": 0, "skipped": 20}
    assert sum(flipping.values()) == 40
    assert (Verdict.objects.filter(run=run).count(), RepeatVerdict.objects.filter(run=run).count()) == (20, 20)
    assert pending_item_ids(run) == []


def test_a_resume_judges_only_the_missing_repeats(world, django_capture_on_commit_callbacks, flipping):
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(
            judge_version_id=version().pk, dataset_name="support", size=10, chunk_size=10, repeats=3
        )
    items = pending_item_ids(run)
    assert len(items) == 10
    # A worker wrote every first verdict and some repeats, then died: item 0 lacks repeat 3, item 1 both
    # repeats, item 2 had an error on repeat 2.
    from calibration.backends import JudgeResult

    outcomes = [Outcome((pk, 1), JudgeResult("correct")) for pk in items]
    outcomes += [Outcome((pk, r), JudgeResult("correct")) for pk in items[2:] for r in (2, 3)]
    outcomes += [Outcome((items[0], 2), JudgeResult("correct"))]
    assert CALIBRATION_RUNS.record(run, outcomes) == 10 + 16 + 1
    assert CALIBRATION_RUNS.record(run, [Outcome((items[2], 2), None, "HTTP 500", 4, True)]) == 0  # final stands
    RepeatVerdict.objects.filter(run=run, item_id=items[2], repeat=2).update(verdict="error")
    assert pending_item_ids(run) == items[:3]
    assert CALIBRATION_RUNS.done_among(run.pk, items) == set(items[3:])
    before = sum(flipping.values())
    tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)
    # Item 0: repeat 3; item 1: repeats 2 and 3; item 2: its errored repeat 2. Four calls, nothing else.
    assert sum(flipping.values()) - before == 4
    run.refresh_from_db()
    assert run.status == "done"
    assert RepeatVerdict.objects.filter(run=run).exclude(verdict="error").count() == 20
    stored = Measurement.objects.get(run=run).self_consistency
    assert stored is not None and stored["n"] == 10


def test_a_chunk_given_up_marks_every_missing_slot_and_the_run_fails(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=version().pk, dataset_name="support", size=5, repeats=2)
    items = pending_item_ids(run)
    from calibration.services.calibration import calibration_chunk_give_up, calibration_close

    calibration_chunk_give_up(run_id=run.pk, item_ids=items, error="gave up after 6 retries: HTTP 503")
    assert Verdict.objects.filter(run=run, verdict="error").count() == 5
    assert RepeatVerdict.objects.filter(run=run, verdict="error").count() == 5
    closed = calibration_close(run_id=run.pk)
    assert closed is not None and closed.status == "failed"
    assert closed.message.startswith("10 of 10 judgement(s) could not be made (e.g. gave up after 6 retries")
    assert pending_item_ids(closed) == items


@pytest.mark.parametrize("repeats", [0, 21, -1, "3", True])
def test_repeats_out_of_range_is_refused_and_nothing_is_written(world, repeats):
    with pytest.raises(ServiceError) as err:
        calibration_start(judge_version_id=version().pk, dataset_name="support", size=5, repeats=repeats)
    assert [p.field for p in err.value.problems] == ["repeats"]
    assert (CalibrationRun.objects.count(), CalibrationSample.objects.count()) == (0, 0)


@pytest.mark.parametrize("value", ["0", "21"])
def test_calibrate_repeats_out_of_range_exits_2_naming_repeats(world, capsys, value):
    v = version()
    with pytest.raises(SystemExit) as exc:
        call_command("calibrate", str(v.pk), "--dataset", "support", "--repeats", value, "--json")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "repeats" in err and "from 1 to 20" in err
    assert (CalibrationRun.objects.count(), CalibrationSample.objects.count()) == (0, 0)


def test_calibrate_repeats_records_the_run(world, capsys, django_capture_on_commit_callbacks):
    v = version()
    with django_capture_on_commit_callbacks(execute=False):
        call_command("calibrate", str(v.pk), "--dataset", "support", "--sample", "6", "--repeats", "4", "--json")
    out = json.loads(capsys.readouterr().out)
    assert (out["repeats"], out["total"]) == (4, 6)
    assert CalibrationRun.objects.get().repeats == 4
