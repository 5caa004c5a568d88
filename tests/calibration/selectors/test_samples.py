"""Calibration names the disputed answers it leaves out: a sample never draws them (no final label), and
the calibrate command, the API and the run page count and name them until an adjudicator settles them."""

import json

import pytest

from annotation.models import Answer, Dataset
from annotation.selectors.blind import blind_scope
from annotation.selectors.disputes import dispute_key
from annotation.services.disputes import dispute_adjudicate
from annotation.services.label_import import labels_import
from annotation.services.queues import queue_create
from calibration.selectors.samples import sample_left_out
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_draw
from tests.calibration.world import load_world
from tests.conftest import run_cmd, write_jsonl


@pytest.fixture
def disputed_world(db, tmp_path, make_user):
    """The 60-answer world, and a third annotator who disagrees with the other two on q-0012 and q-0040."""
    files = load_world(tmp_path / "world")
    make_user("ann-c", "annotator")
    lines = []
    for i in (12, 40):
        verdict = "incorrect" if Answer.objects.get(qid=f"q-{i:04d}").final_verdict == "correct" else "correct"
        lines.append({"run_id": "run-a", "qid": f"q-{i:04d}", "annotator": "ann-c", "verdict": verdict})
    labels_import(path=write_jsonl(tmp_path / "third.jsonl", lines))
    return files


def test_disputed_answers_are_never_drawn_and_are_named(disputed_world):
    dataset = Dataset.objects.get(name="support")
    assert sample_left_out(dataset) == {
        "n": 2,
        "answers": ["run-a/q-0012", "run-a/q-0040"],
        "words": "2 disputed answers left out: run-a/q-0012, run-a/q-0040",
        "blind_excluded": 0,
    }
    judge = judge_version_create(judge_name="span-judge", backend="span")[0].judge
    sample = sample_draw(judge=judge, dataset=dataset, size=60, seed=0)
    assert sample.items.count() == 58
    assert not sample.items.filter(answer__qid__in=["q-0012", "q-0040"]).exists()


def test_the_calibrate_command_counts_and_names_them(disputed_world):
    v = judge_version_create(judge_name="span-judge", backend="span")[0]
    code, out, err = run_cmd("calibrate", str(v.pk), "--dataset", "support", "--sample", "10", "--json")
    assert code == 0
    assert json.loads(out)["disputed_left_out"] == {
        "n": 2,
        "answers": ["run-a/q-0012", "run-a/q-0040"],
        "words": "2 disputed answers left out: run-a/q-0012, run-a/q-0040",
        "blind_excluded": 0,
    }
    assert "2 disputed answers left out: run-a/q-0012, run-a/q-0040" in err


def test_once_settled_they_are_no_longer_left_out(disputed_world, make_user):
    adj = make_user("adj", "adjudicator")
    answer = Answer.objects.get(qid="q-0040")
    dispute_adjudicate(key=dispute_key(answer.pk), adjudicator=adj, verdict="correct", reason="states the code")
    assert sample_left_out(Dataset.objects.get(name="support"))["answers"] == ["run-a/q-0012"]


def test_a_viewer_grading_them_blind_gets_a_count_not_names(disputed_world, make_user):
    blind = make_user("eng-ann", "engineer", "annotator")
    queue_create(name="look again", annotators=["eng-ann"], overlap=1, items=[{"run_id": "run-a", "qid": "q-0012"}])
    dataset = Dataset.objects.get(name="support")
    assert sample_left_out(dataset, scope=blind_scope(blind)) == {
        "n": 2,
        "answers": [],
        "words": "no disputed answers left out (and 2 you label blind, not named)",
        "blind_excluded": 2,
    }
