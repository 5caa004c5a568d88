"""Same-family bias: the judge's lenience on human-incorrect answers of its own model family and of others."""

from typing import cast

import pytest
from django.utils import timezone

from annotation.models import Answer, Dataset, Run
from calibration.models import CalibrationRun, CalibrationSample, Judge, JudgeVersion, Measurement, SampleItem, Verdict
from calibration.selectors.family_bias import family_bias, judge_family
from evalstats.proportions import newcombe_diff_ci
from tests.factories import AnswerFactory, DatasetFactory, JudgeFactory, JudgeVersionFactory, RunFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("model", "params", "family"),
    [
        ("gpt-4o-2024-08-06", {}, "openai"),
        ("meta-llama/Llama-3.1-8B-Instruct", {}, "meta"),
        ("claude-3-5-sonnet", {}, "anthropic"),
        ("my-finetune", {}, None),
        ("my-finetune", {"model_family": "Qwen"}, "qwen"),
    ],
)
def test_the_judge_family_from_params_or_the_model_name(model, params, family):
    assert judge_family(JudgeVersion(model=model, params=params)) == family


def measured(model, groups):
    """groups: [(run model_family, human verdict, judge verdict, how many)]."""
    judge = cast(Judge, JudgeFactory())
    version = cast(JudgeVersion, JudgeVersionFactory(judge=judge, model=model))
    sample = CalibrationSample.objects.create(judge=judge, dataset=cast(Dataset, DatasetFactory()), size=1, seed=0)
    calib = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done")
    runs: dict = {}
    position = 0
    for fam, human, verdict, count in groups:
        if fam not in runs:
            runs[fam] = cast(Run, RunFactory(record={"model_family": fam} if fam else {}))
        for _ in range(count):
            answer = cast(Answer, AnswerFactory(run=runs[fam], final_verdict=human))
            item = SampleItem.objects.create(sample=sample, answer=answer, stratum="s", position=position)
            position += 1
            Verdict.objects.create(run=calib, item=item, verdict=verdict, human_verdict=human)
    m = Measurement.objects.create(
        judge_version=version,
        run=calib,
        n=position,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )
    return version, m


def test_a_judge_lenient_on_its_own_family_is_warned():
    version, m = measured(
        "gpt-4o",
        [
            ("openai", "incorrect", "correct", 9),
            ("openai", "incorrect", "incorrect", 1),
            ("meta", "incorrect", "correct", 3),
            ("meta", "incorrect", "incorrect", 7),
            ("meta", "correct", "correct", 5),  # human-correct: not in the lenience
            (None, "incorrect", "correct", 4),  # no family on the run: left out
        ],
    )
    out = family_bias(version, m)
    lo, hi = newcombe_diff_ci(9, 10, 3, 10)
    assert out == {
        "family": "openai",
        "same_family_n": 10,
        "other_n": 10,
        "lenience_same": 0.9,
        "lenience_other": 0.3,
        "diff_points": 60.0,
        "ci95": [100 * lo, 100 * hi],
        "warning": True,
    }
    assert round(out["ci95"][0], 2) == 17.05  # Newcombe's Table II: 0.1705 to 0.8090


def test_no_warning_when_the_interval_holds_zero_or_one_side_is_missing():
    version, m = measured(
        "gpt-4o",
        [
            ("openai", "incorrect", "correct", 2),
            ("openai", "incorrect", "incorrect", 1),
            ("meta", "incorrect", "correct", 1),
            ("meta", "incorrect", "incorrect", 2),
        ],
    )
    out = family_bias(version, m)
    assert out is not None and out["warning"] is False and out["ci95"][0] < 0
    only_own, m2 = measured("gpt-4o", [("openai", "incorrect", "correct", 3)])
    assert family_bias(only_own, m2) is None
    unknown, m3 = measured("my-finetune", [("openai", "incorrect", "correct", 3), ("meta", "incorrect", "correct", 3)])
    assert family_bias(unknown, m3) is None


def test_evidence_endpoint_for_engineers(api_client_for):
    version, m = measured(
        "gpt-4o",
        [
            ("openai", "incorrect", "correct", 9),
            ("openai", "incorrect", "incorrect", 1),
            ("meta", "incorrect", "correct", 3),
            ("meta", "incorrect", "incorrect", 7),
        ],
    )
    eng = api_client_for("eng", "engineer")
    body = eng.get(f"/api/judge-versions/{version.pk}/evidence/").json()
    assert body["judge_version"] == version.pk and body["measurement_run"] == m.run_id
    assert body["family_bias"]["diff_points"] == 60.0 and body["family_bias"]["warning"] is True
    assert body["per_annotator"] == {}  # nobody's labels are stored on these answers
    assert eng.get("/api/judge-versions/99999/evidence/").status_code == 404
    assert api_client_for("ann", "annotator").get(f"/api/judge-versions/{version.pk}/evidence/").status_code == 403


def test_version_page_shows_the_warning(client, make_user):
    version, _m = measured(
        "gpt-4o",
        [
            ("openai", "incorrect", "correct", 9),
            ("openai", "incorrect", "incorrect", 1),
            ("meta", "incorrect", "correct", 3),
            ("meta", "incorrect", "incorrect", 7),
        ],
    )
    client.force_login(make_user("eng-page", "engineer"))
    page = client.get(f"/judges/versions/{version.pk}/").content.decode()
    assert "60.0 points [17.1, 80.9]" in page
    assert "More lenient on its own family." in page
