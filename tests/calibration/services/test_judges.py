"""Creating a judge version: a judge calls only base URLs under JUDGE_ALLOWED_BASE_URLS (and loopback with
DEBUG on), refused when a version is created and again in the backend before any call, for versions already in
the database; a prompt template naming a placeholder the judge cannot fill is refused, naming it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from calibration.backends import JudgeItem, PermanentJudgeError, backend_for
from calibration.models import GradedAnswer, Judge, JudgeVersion, Verdict
from calibration.services.grading import grading_start
from calibration.services.judges import judge_version_create
from evalapp.errors import ServiceError
from tests.conftest import run_cmd

OPENAI = ["https://api.openai.com/v1"]
ITEM = JudgeItem(
    run_id="r",
    qid="q",
    question="how long?",
    answer="It is 30 days.",
    expected="30 days",
    gold_text="Trials run for 30 days.",
)


@pytest.fixture
def strict(settings):
    settings.JUDGE_ALLOWED_BASE_URLS = list(OPENAI)
    settings.JUDGE_ALLOW_LOOPBACK = False
    return settings


@pytest.mark.django_db
def test_create_judge_version_refuses_a_url_outside_the_list(strict):
    code, out, err = run_cmd(
        "create_judge_version",
        "--judge",
        "llm",
        "--backend",
        "openai",
        "--model",
        "m",
        "--param",
        "base_url=http://127.0.0.1@evil.example/v1",
        "--json",
    )

    assert code == 2
    problem = json.loads(out)["problems"][0]
    assert problem["field"] == "param base_url"
    assert (
        "'http://127.0.0.1@evil.example/v1'" in problem["message"] and "JUDGE_ALLOWED_BASE_URLS" in problem["message"]
    )
    assert "JUDGE_ALLOWED_BASE_URLS" in err
    assert (Judge.objects.count(), JudgeVersion.objects.count()) == (0, 0)
    assert (
        run_cmd(
            "create_judge_version",
            "--judge",
            "llm",
            "--backend",
            "openai",
            "--model",
            "m",
            "--param",
            "base_url=https://api.openai.com/v1",
            "--json",
        )[0]
        == 0
    )


@pytest.mark.django_db
def test_the_settings_base_url_is_checked_when_no_param_is_given(strict):
    strict.JUDGE_OPENAI_BASE_URL = "http://llm.internal.example/v1"
    with pytest.raises(ServiceError) as refused:
        judge_version_create(judge_name="llm", backend="openai", model="m")
    assert refused.value.problems[0].field == "JUDGE_OPENAI_BASE_URL"
    assert "http://llm.internal.example/v1" in str(refused.value)
    assert JudgeVersion.objects.count() == 0


@pytest.mark.django_db
def test_moving_an_existing_version_outside_the_list_is_refused(strict):
    version, _ = judge_version_create(
        judge_name="llm", backend="openai", model="m", params={"base_url": "https://api.openai.com/v1"}
    )
    with pytest.raises(ServiceError):
        judge_version_create(
            judge_name="llm", backend="openai", model="m", params={"base_url": "https://api.openai.com.evil.com/v1"}
        )
    version.refresh_from_db()
    assert version.params == {"base_url": "https://api.openai.com/v1"}


@pytest.mark.django_db
def test_the_rule_backends_need_no_url(strict):
    version, created = judge_version_create(judge_name="spans", backend="span")
    assert created and version.backend == "span"


@pytest.mark.django_db
def test_the_api_answers_400_and_writes_nothing(strict, api_client_for):
    api = api_client_for("eng", "engineer")
    response = api.post(
        "/api/judge-versions/",
        {"judge": "llm", "backend": "openai", "model": "m", "params": {"base_url": "http://127.0.0.1.evil.example/v1"}},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["problems"][0]["field"] == "param base_url"
    assert "http://127.0.0.1.evil.example/v1" in body["problems"][0]["message"]
    assert JudgeVersion.objects.count() == 0


def test_the_backend_never_calls_outside_the_list(judge_server, strict):
    backend = backend_for("openai", model="judge-1", params={"base_url": judge_server.url})
    with pytest.raises(PermanentJudgeError) as refused:
        backend.judge(ITEM)
    assert judge_server.url in str(refused.value) and "JUDGE_ALLOWED_BASE_URLS" in str(refused.value)
    assert judge_server.requests == 0


def test_the_backend_calls_an_allowed_url(judge_server, settings):
    settings.JUDGE_ALLOWED_BASE_URLS = [judge_server.url]
    settings.JUDGE_ALLOW_LOOPBACK = False
    assert (
        backend_for("openai", model="judge-1", params={"base_url": judge_server.url}).judge(ITEM).verdict == "correct"
    )
    assert judge_server.requests == 1


@pytest.mark.django_db
def test_an_old_version_pointing_outside_the_list_fails_its_calibration_with_the_reason(
    tmp_path, judge_server, run_inline, settings
):
    from tests.calibration.world import load_world

    load_world(tmp_path / "w", n=12)
    version, _ = judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", min_n=5, params={"base_url": judge_server.url}
    )
    settings.JUDGE_ALLOWED_BASE_URLS = list(OPENAI)
    settings.JUDGE_ALLOW_LOOPBACK = False

    run = run_inline(version, size=12, chunk_size=12)

    assert run.status == "failed"
    assert "12 of 12 item(s) could not be judged" in run.message and "JUDGE_ALLOWED_BASE_URLS" in run.message
    reasons = set(Verdict.objects.filter(run=run).values_list("verdict", "reason"))
    assert len(reasons) == 1
    verdict, reason = reasons.pop()
    assert verdict == "error" and judge_server.url in reason and "JUDGE_ALLOWED_BASE_URLS" in reason
    assert judge_server.requests == 0


@pytest.mark.django_db
def test_an_old_version_pointing_outside_the_list_grades_nothing(
    tmp_path, judge_server, settings, django_capture_on_commit_callbacks
):
    from tests.calibration.world import load_world

    load_world(tmp_path / "w", n=6)
    version, _ = judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", params={"base_url": judge_server.url}
    )
    settings.JUDGE_ALLOWED_BASE_URLS = list(OPENAI)
    settings.JUDGE_ALLOW_LOOPBACK = False
    with django_capture_on_commit_callbacks(execute=True):
        grading = grading_start(
            judge_version_id=version.pk, run_id="run-a", force=True, reason="allow-list test", run_now=True
        )
    outputs = set(GradedAnswer.objects.filter(grading=grading).values_list("verdict", "raw_output"))
    assert len(outputs) == 1
    verdict, output = outputs.pop()
    assert verdict == "error" and "JUDGE_ALLOWED_BASE_URLS" in output
    assert judge_server.requests == 0


ROOT = Path(__file__).resolve().parents[3]


def allow_settings(tmp_path, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_") and k not in ("DEBUG", "SECRET_KEY")}
    env.update({"EVALAPP_VAR_DIR": str(tmp_path), **env_extra})
    code = (
        "import os, json; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
        "from django.conf import settings; print(json.dumps([settings.JUDGE_ALLOWED_BASE_URLS, settings.JUDGE_ALLOW_LOOPBACK]))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_defaults_are_the_configured_base_url_and_loopback_only_with_debug(tmp_path):
    production = {"DEBUG": "false", "SECRET_KEY": "s" * 60}
    assert allow_settings(tmp_path, JUDGE_OPENAI_BASE_URL="https://llm.example/v1", DEBUG="true") == [
        ["https://llm.example/v1"],
        True,
    ]
    assert allow_settings(tmp_path, JUDGE_OPENAI_BASE_URL="https://llm.example/v1", **production) == [
        ["https://llm.example/v1"],
        False,
    ]
    assert allow_settings(
        tmp_path, JUDGE_ALLOWED_BASE_URLS="https://a.example/v1,https://b.example/", **production
    ) == [["https://a.example/v1", "https://b.example/"], False]


@pytest.mark.django_db
def test_a_prompt_with_an_unknown_placeholder_is_refused_and_nothing_is_written(tmp_path):
    prompt = tmp_path / "judge.txt"
    prompt.write_text("Question: $question\nAnswer: $anwser\n", encoding="utf-8")

    code, out, _err = run_cmd(
        "create_judge_version", "--judge", "llm", "--backend", "span", "--prompt-file", str(prompt), "--json"
    )

    assert code == 2
    assert json.loads(out)["problems"] == [
        {
            "line": None,
            "field": "prompt_template",
            "message": "line 2, column 9: unknown placeholder $anwser (known: $question, $answer, $expected, "
            "$gold_text, $stratum; write $$ for a dollar sign)",
        }
    ]
    assert (Judge.objects.count(), JudgeVersion.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_a_prompt_with_known_placeholders_and_dollars_is_kept_as_written():
    version, created = judge_version_create(
        judge_name="llm", backend="span", prompt_template="It costs $$5 or $5: $answer vs ${expected}"
    )

    assert created is True
    assert version.prompt_template == "It costs $$5 or $5: $answer vs ${expected}"
