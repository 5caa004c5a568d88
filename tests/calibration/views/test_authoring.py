"""A judge version made in the browser goes through the service the command uses: the same configuration is
the same version either way, a refusal is a sentence naming the field with HTTP 400 and nothing written, and
the preview renders the prompt for one real answer, never one the viewer labels blind."""

import json

import pytest
from django.test import Client

from annotation.services.queues import queue_create
from calibration.models import Judge, JudgeVersion
from calibration.services.judges import config_hash, judge_version_create
from tests.conftest import run_cmd

PROMPT = "Question: $question\nGold: $gold_text\nAnswer: $answer"


@pytest.fixture
def eng(make_user):
    client = Client()
    client.force_login(make_user("eng", "engineer"))
    return client


def counts():
    return Judge.objects.count(), JudgeVersion.objects.count()


def form_error(response) -> str:
    text = response.content.decode()
    start = text.index('data-testid="form-error">') + len('data-testid="form-error">')
    return text[start : text.index("</p>", start)]


@pytest.mark.django_db
def test_only_engineers_reach_the_form_and_the_preview(make_user):
    for roles in (("annotator",), ("adjudicator",), ("expert",)):
        client = Client()
        client.force_login(make_user("-".join(roles), *roles))
        assert client.get("/judges/new/").status_code == 403
        assert client.post("/judges/new/", {"judge": "j", "backend": "span"}).status_code == 403
        assert client.post("/judges/new/preview/", {"dataset": "support"}).status_code == 403
    assert counts() == (0, 0)
    assert Client().get("/judges/new/").status_code == 302  # to the sign-in page


@pytest.mark.django_db
def test_a_version_made_in_the_browser_is_the_one_the_command_finds(eng, tmp_path):
    response = eng.post(
        "/judges/new/",
        {
            "judge": "faithfulness",
            "backend": "openai",
            "model": "qwen2.5-7b",
            "prompt_template": PROMPT,
            "rubric": "",
            "params": '{"base_url": "http://127.0.0.1:8001/v1", "max_tokens": 200}',
            "threshold": "0.6",
        },
    )

    version = JudgeVersion.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/judges/versions/{version.pk}/"
    assert (version.judge.name, version.number, version.backend, version.model, version.prompt_template) == (
        "faithfulness",
        1,
        "openai",
        "qwen2.5-7b",
        PROMPT,
    )
    assert version.params == {"base_url": "http://127.0.0.1:8001/v1", "max_tokens": 200}
    assert version.created_by is not None and version.created_by.username == "eng"
    assert version.judge.threshold == 0.6
    assert version.config_hash == config_hash(
        backend="openai", model="qwen2.5-7b", prompt_template=PROMPT, params={"max_tokens": 200}, rubric=""
    )
    prompt = tmp_path / "p.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    code, out, _ = run_cmd(
        "create_judge_version",
        *("--judge", "faithfulness", "--backend", "openai", "--model", "qwen2.5-7b"),
        *("--prompt-file", str(prompt), "--param", "max_tokens=200", "--param", "base_url=http://127.0.0.1:8001/v1"),
        "--json",
    )
    assert code == 0
    assert json.loads(out) == {
        "judge_version": version.pk,
        "config_hash": version.config_hash,
        "judge": "faithfulness",
        "version": 1,
        "created": False,
    }
    page = eng.get(response["Location"]).content.decode()
    assert "Created faithfulness v1; it starts unmeasured: calibrate it." in page

    again = eng.post(
        "/judges/new/?judge=faithfulness",
        {
            "judge": "faithfulness",
            "backend": "openai",
            "model": "qwen2.5-7b",
            "prompt_template": PROMPT,
            "params": '{"max_tokens": 200, "base_url": "http://127.0.0.1:8001/v1"}',
            "threshold": "0.6",
        },
    )
    assert again["Location"] == f"/judges/versions/{version.pk}/" and counts() == (1, 1)
    assert (
        "faithfulness v1 already has this configuration; nothing new was created."
        in eng.get(again["Location"]).content.decode()
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "sentence"),
    [
        (
            {"params": '{"max_tokens": 200,,}'},
            "the parameters are not valid JSON (Expecting property name enclosed in double quotes at line 1, "
            "column 20)",
        ),
        ({"params": "[200]"}, "the parameters must be a JSON object, such as {&quot;max_tokens&quot;: 200}"),
        ({"params": '{"concurrency": -3}'}, "param concurrency must be a non-negative number"),
        ({"threshold": "2"}, "the kappa threshold must be a number from -1 to 1"),
        ({"backend": "gpt"}, "the backend must be one of span, extraction, openai, replay, not &#x27;gpt&#x27;"),
        (
            {"judge": "Faith Fulness"},
            "the judge name must be a slug (letters, digits, - and _) of at most 200 characters",
        ),
        ({"backend": "openai", "model": ""}, "the model the openai backend needs --model (the model snapshot to call)"),
        (
            {"prompt_template": "$question $anwser"},
            "the prompt template line 1, column 11: unknown placeholder $anwser (known: $question, $answer, $expected, "
            "$gold_text, $stratum; write $$ for a dollar sign)",
        ),
    ],
)
def test_bad_input_is_a_sentence_naming_the_field_and_writes_nothing(eng, changes, sentence):
    data = {"judge": "faithfulness", "backend": "span", "model": "", "params": "", "threshold": "0.7", **changes}

    response = eng.post("/judges/new/", data)

    assert response.status_code == 400
    assert form_error(response) == f"Cannot create the judge version: {sentence}; nothing was written."
    assert counts() == (0, 0)
    # What was typed stays in the form to be fixed.
    assert 'name="judge" value="{}"'.format(data["judge"]) in response.content.decode()


@pytest.mark.django_db
def test_a_base_url_outside_the_allow_list_is_refused(eng, settings):
    settings.JUDGE_ALLOWED_BASE_URLS = ["https://judge.example.com/v1"]
    settings.JUDGE_ALLOW_LOOPBACK = False

    response = eng.post(
        "/judges/new/",
        {"judge": "llm", "backend": "openai", "model": "m", "params": '{"base_url": "http://127.0.0.1:8001/v1"}'},
    )

    assert response.status_code == 400
    error = form_error(response)
    assert error.startswith("Cannot create the judge version: the parameter base_url ")
    assert "JUDGE_ALLOWED_BASE_URLS" in error and "http://127.0.0.1:8001/v1" in error
    assert counts() == (0, 0)


@pytest.mark.django_db
def test_a_new_version_starts_from_the_judges_version_without_its_secrets(eng):
    v1, _ = judge_version_create(
        judge_name="llm",
        backend="openai",
        model="m-1",
        prompt_template=PROMPT,
        params={"base_url": "http://127.0.0.1:8001/v1", "api_key": "sk-SECRET-123", "max_tokens": 5},
        threshold=0.65,
    )
    judge_version_create(judge_name="llm", backend="span")

    latest = eng.get("/judges/new/?judge=llm").content.decode()
    chosen = eng.get(f"/judges/new/?judge=llm&version={v1.pk}").content.decode()

    assert '<option value="span" selected>' in latest and "Starting from v2." in latest
    assert '<option value="openai" selected>' in chosen and "Starting from v1." in chosen
    assert 'name="model" value="m-1"' in chosen and 'value="0.65"' in chosen
    assert "Question: $question\nGold: $gold_text\nAnswer: $answer</textarea>" in chosen
    assert "&quot;max_tokens&quot;: 5" in chosen and "Not copied from v1: api_key" in chosen
    assert "sk-SECRET-123" not in chosen
    assert eng.get("/judges/new/?judge=nobody").status_code == 404
    assert eng.get(f"/judges/new/?judge=llm&version={v1.pk + 99}").status_code == 404
    assert eng.get("/judges/new/?judge=llm&version=abc").status_code == 400


@pytest.mark.django_db
def test_the_preview_renders_the_prompt_for_one_answer(world, eng):
    response = eng.post(
        "/judges/new/preview/",
        {"dataset": "support", "backend": "openai", "prompt_template": PROMPT, "params": '{"system": "Grade."}'},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    text = response.content.decode()
    assert '<pre class="prompt mono" data-testid="preview-system">Grade.</pre>' in text
    assert (
        '<pre class="prompt mono" data-testid="preview-user">Question: what is the code of item 0?\n'
        "Gold: The code of item 0 is code 0000.\nAnswer: I am not sure which code applies.</pre>"
    ) in text
    assert "answer of run run-a to q-0000, the first question of support (stratum policy_lookup)" in text
    assert "sends no prompt" not in text
    span = eng.post("/judges/new/preview/", {"dataset": "support", "backend": "span", "qid": "q-0002"}).content
    assert "The span backend sends no prompt" in span.decode() and "The code is code 0002." in span.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "status", "sentence"),
    [
        (
            {"dataset": "support", "prompt_template": "Q: $questoin"},
            400,
            "the prompt template line 1, column 4: unknown placeholder $questoin (known: $question, $answer, "
            "$expected, $gold_text, $stratum; write $$ for a dollar sign)",
        ),
        (
            {"dataset": "support", "params": "{"},
            400,
            "the parameters are not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)",
        ),
        ({"dataset": ""}, 400, "the dataset is required"),
        ({"dataset": "nope"}, 404, "unknown dataset &#x27;nope&#x27;"),
    ],
)
def test_a_preview_that_cannot_render_says_why(world, eng, data, status, sentence):
    response = eng.post("/judges/new/preview/", data, HTTP_HX_REQUEST="true")

    assert response.status_code == status
    assert (
        response.content.decode().strip()
        == f'<p class="errors" role="alert" data-testid="preview-error">{sentence}.</p>'
    )


@pytest.mark.django_db
def test_the_preview_never_shows_an_answer_the_viewer_labels_blind(world, make_user):
    both = make_user("eng_ann", "engineer", "annotator")
    make_user("ann_o", "annotator")
    queue_create(name="blind", items=[{"run_id": "run-a", "qid": "q-0003"}], annotators=["eng_ann", "ann_o"])
    client = Client()
    client.force_login(both)

    for data in (
        {"dataset": "support"},
        {"dataset": "support", "qid": "q-0003"},
        {"dataset": "support", "qid": "q-0004"},
    ):
        text = client.post("/judges/new/preview/", {**data, "prompt_template": "$answer"}).content.decode()
        assert 'data-testid="preview-none"' in text
        assert "The code is" not in text and "not sure" not in text and "run-a" not in text
