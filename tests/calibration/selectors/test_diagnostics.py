"""The human-human ceiling on the judge page counts the unresolved disagreements a sample cannot draw."""

import pytest
from django.utils import timezone
from sklearn.metrics import cohen_kappa_score

from annotation.models import Dataset
from annotation.services.label_import import labels_import
from calibration.models import CalibrationRun, Measurement
from calibration.selectors.diagnostics import human_ceiling
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_draw
from tests.calibration.world import human_verdict, load_world
from tests.conftest import write_jsonl

pytestmark = pytest.mark.django_db

DISPUTED = (12, 40)


def _measured(tmp_path, make_user):
    """The 60-answer world (two annotators agree on every answer) with a third annotator who disagrees
    on q-0012 and q-0040: those two are disputed, and a 60-answer sample draws the other 58."""
    load_world(tmp_path / "world")
    make_user("ann-c", "annotator")
    lines = [
        {
            "run_id": "run-a",
            "qid": f"q-{i:04d}",
            "annotator": "ann-c",
            "verdict": "correct" if human_verdict(i) == "incorrect" else "incorrect",
        }
        for i in DISPUTED
    ]
    labels_import(path=write_jsonl(tmp_path / "third.jsonl", lines))
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=60, seed=0)
    assert sample.items.count() == 58
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=58)
    return Measurement.objects.create(
        judge_version=version,
        run=run,
        n=58,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )


def test_the_ceiling_counts_unresolved_disagreements_too(tmp_path, make_user):
    ceiling = human_ceiling(_measured(tmp_path, make_user))
    assert ceiling is not None
    # 58 sampled answers, one agreeing pair each; each disputed answer has 3 labels: the agreeing pair
    # and two pairs with ann-c that disagree.
    a, b = [], []
    for i in range(60):
        v = human_verdict(i)
        if i in DISPUTED:
            w = "correct" if v == "incorrect" else "incorrect"
            a += [v, v, v]
            b += [v, w, w]
        else:
            a.append(v)
            b.append(v)
    assert (ceiling["answers"], ceiling["unresolved"], ceiling["n"]) == (60, 2, 64)
    assert ceiling["raw_agreement"] == 60 / 64
    assert ceiling["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert ceiling["kappa"] < 1.0


def test_the_ceiling_adds_krippendorffs_alpha_over_answers_with_three_or_more_labels(tmp_path, make_user):
    ceiling = human_ceiling(_measured(tmp_path, make_user))
    assert ceiling is not None
    # Only q-0012 (incorrect, incorrect, correct) and q-0040 (correct, correct, incorrect) carry three
    # labels. Coincidences, each pair weighted 1/(3-1): o(c,c) = o(i,i) = 1, o(c,i) = o(i,c) = 2, n = 6;
    # D_o = 4/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6, alpha = 1 - (4/6) / 0.6 = -1/9.
    multi = ceiling["multi_rater"]
    assert (multi["answers"], multi["raters"], multi["ratings"], multi["metric"]) == (2, 3, 6, "nominal")
    assert multi["krippendorff_alpha"] == pytest.approx(-1 / 9, abs=1e-12)
    assert multi["alpha_ci95"] is None  # two answers: too few for a bootstrap interval


def test_no_multi_rater_figure_without_an_answer_with_three_labels(tmp_path, make_user):
    load_world(tmp_path / "world")
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=60, seed=0)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=60)
    measurement = Measurement.objects.create(
        judge_version=version,
        run=run,
        n=60,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )
    ceiling = human_ceiling(measurement)
    assert ceiling is not None
    assert (ceiling["answers"], ceiling["n"], ceiling["kappa"]) == (60, 60, 1.0)
    assert ceiling["multi_rater"] is None
