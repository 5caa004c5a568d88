"""propose_judge_version: corrected few-shot examples from a version's disagreements, held out of the new
version's calibration."""

import json

import pytest
from django.core.management import call_command

from calibration.backends.prompt import DEFAULT_PROMPT
from calibration.models import CalibrationRun, JudgeVersion, Measurement, Verdict
from calibration.services.alignment import judge_version_propose
from calibration.services.judges import judge_version_create
from evalapp.errors import ServiceError


def span():
    return judge_version_create(judge_name="span-judge", backend="span", min_n=10)[0]


def wrong_answers(run):
    return sorted(
        v.item.answer_id
        for v in Verdict.objects.filter(run=run).select_related("item__answer")
        if v.verdict != v.item.answer.final_verdict
    )


def test_the_new_version_carries_the_examples_and_is_measured_without_them(world, run_inline):
    v1 = span()
    run1 = run_inline(v1, size=30)
    m1 = Measurement.objects.get(run=run1)
    wrong = wrong_answers(run1)
    assert len(wrong) >= 2
    out = judge_version_propose(judge_version_id=v1.pk, examples=2, seed=3)
    v2 = JudgeVersion.objects.get(pk=out["judge_version"])
    assert out["disagreements"] == len(wrong)
    assert set(out["examples"]) <= set(wrong) and len(set(out["examples"])) == 2
    assert v2.params["held_out_exclude"] == sorted(out["examples"])
    assert (v2.judge_id, v2.number, out["created"]) == (v1.judge_id, v1.number + 1, True)
    assert v2.config_hash != v1.config_hash
    assert v2.prompt_template.startswith("Examples graded by people (follow them):\n\nExample 1.\nQuestion: ")
    assert v2.prompt_template.endswith(DEFAULT_PROMPT)
    assert v2.prompt_template.count('Correct verdict: {"verdict": "incorrect"}') == 2
    run2 = run_inline(v2, size=30)
    m2 = Measurement.objects.get(run=run2)
    assert run2.sample_id == run1.sample_id  # the same stored sample
    assert (run2.total, m2.n) == (run1.total - 2, m1.n - 2)
    judged = set(Verdict.objects.filter(run=run2).values_list("item__answer_id", flat=True))
    assert judged.isdisjoint(out["examples"])
    # The same draw again finds the version it made.
    again = judge_version_propose(judge_version_id=v1.pk, examples=2, seed=3)
    assert (again["judge_version"], again["created"]) == (v2.pk, False)


def test_refusals_write_nothing(world, run_inline, capsys):
    v1 = span()
    with pytest.raises(ServiceError, match="is not measured"):
        judge_version_propose(judge_version_id=v1.pk, examples=1)
    run_inline(v1, size=30)
    wrong = len(wrong_answers(CalibrationRun.objects.get(judge_version=v1)))
    before = JudgeVersion.objects.count()
    with pytest.raises(ServiceError) as exc:
        judge_version_propose(judge_version_id=v1.pk, examples=wrong + 1)
    assert exc.value.problems[0].field == "examples"
    assert exc.value.problems[0].message == f"must be at most {wrong}"
    with pytest.raises(SystemExit) as exit_:
        call_command("propose_judge_version", str(v1.pk), "--examples", "0")
    assert exit_.value.code == 2
    assert "field 'examples': must be from 1 to 50, not 0" in capsys.readouterr().err
    assert JudgeVersion.objects.count() == before


def test_command_json(world, run_inline, capsys):
    v1 = span()
    run_inline(v1, size=30)
    call_command("propose_judge_version", str(v1.pk), "--examples", "1", "--seed", "5", "--json")
    out = json.loads(capsys.readouterr().out)
    assert out["from_version"] == v1.pk and len(out["examples"]) == 1 and out["seed"] == 5
    assert JudgeVersion.objects.get(pk=out["judge_version"]).params == {"held_out_exclude": out["examples"]}
