"""The new-version form parses what the page sends: parameters as a JSON object, the backends the registry
has, a finite kappa threshold; every refusal names its field in a sentence."""

import pytest

from calibration.forms import JudgeVersionForm, PromptPreviewForm
from evalapp.errors import ServiceError

GOOD = {"judge": "faithfulness", "backend": "openai", "model": "qwen2.5-7b", "threshold": "0.6"}


def problems(form) -> list[tuple[str | None, str]]:
    with pytest.raises(ServiceError) as caught:
        form.parsed()
    return [(p.field, p.message) for p in caught.value.problems]


def test_a_full_form_parses_to_what_the_service_takes():
    data = {
        **GOOD,
        "prompt_template": "  Q: $question\n",
        "rubric": "Be strict.",
        "params": '{"max_tokens": 200, "json_mode": true, "stop": ["\\n\\n"], "base_url": "http://127.0.0.1:8001/v1"}',
    }

    assert JudgeVersionForm(data).parsed() == {
        "judge": "faithfulness",
        "backend": "openai",
        "model": "qwen2.5-7b",
        "prompt_template": "  Q: $question\n",
        "rubric": "Be strict.",
        "params": {"max_tokens": 200, "json_mode": True, "stop": ["\n\n"], "base_url": "http://127.0.0.1:8001/v1"},
        "threshold": 0.6,
    }


def test_a_browsers_crlf_line_ends_are_the_files_lf_so_the_configuration_hashes_the_same():
    parsed = JudgeVersionForm({**GOOD, "prompt_template": "Q: $question\r\nA: $answer\r\n", "rubric": "a\rb"}).parsed()

    assert (parsed["prompt_template"], parsed["rubric"]) == ("Q: $question\nA: $answer\n", "a\nb")


def test_empty_parameters_and_threshold_are_none_given():
    parsed = JudgeVersionForm({"judge": "j", "backend": "span", "params": "  \n", "threshold": ""}).parsed()

    assert (parsed["params"], parsed["threshold"], parsed["model"], parsed["prompt_template"]) == ({}, None, "", "")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            '{"max_tokens": 200,}',
            "are not valid JSON (Expecting property name enclosed in double quotes at line 1, column 20)",
        ),
        ('{\n  "max_tokens": 200\n  "stop": 1\n}', "are not valid JSON (Expecting ',' delimiter at line 3, column 3)"),
        ("[1, 2]", 'must be a JSON object, such as {"max_tokens": 200}'),
        ('"max_tokens=200"', 'must be a JSON object, such as {"max_tokens": 200}'),
        (
            '{"temperature": NaN}',
            "are not valid JSON (field 'temperature': NaN is not a number JSON allows (write null, or a finite number))",
        ),
    ],
)
def test_parameters_that_are_not_a_json_object_are_refused_naming_the_field(params, message):
    assert problems(JudgeVersionForm({**GOOD, "params": params})) == [("params", message)]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("backend", "gpt", "must be one of span, extraction, openai, replay, not 'gpt'"),
        ("threshold", "1.5", "must be a number from -1 to 1"),
        ("threshold", "nan", "must be a number from -1 to 1"),
        ("threshold", "high", "must be a number from -1 to 1"),
        ("judge", "", "is required"),
    ],
)
def test_each_bad_field_is_named(field, value, message):
    assert problems(JudgeVersionForm({**GOOD, field: value})) == [(field, message)]


def test_the_preview_names_each_unknown_placeholder():
    form = PromptPreviewForm({"dataset": "support", "prompt_template": "$question\n$anwser $gold"})

    assert problems(form) == [
        (
            "prompt_template",
            "line 2, column 1: unknown placeholder $anwser (known: $question, $answer, $expected, $gold_text, "
            "$stratum; write $$ for a dollar sign)",
        ),
        (
            "prompt_template",
            "line 2, column 9: unknown placeholder $gold (known: $question, $answer, $expected, $gold_text, "
            "$stratum; write $$ for a dollar sign)",
        ),
    ]


def test_the_preview_needs_a_dataset_and_reads_the_system_prompt_from_the_parameters():
    assert problems(PromptPreviewForm({"prompt_template": "$answer"})) == [("dataset", "is required")]
    parsed = PromptPreviewForm({"dataset": "support", "params": '{"system": "Grade it."}'}).parsed()
    assert (parsed["dataset"], parsed["params"], parsed["qid"], parsed["judge"]) == (
        "support",
        {"system": "Grade it."},
        "",
        "",
    )
