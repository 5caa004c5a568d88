"""The judge's prompt: what a template's placeholders may be, each problem as a sentence naming where it is,
and the messages the openai backend sends (the preview renders the same ones)."""

import pytest

from calibration.backends import JudgeItem, backend_for
from calibration.backends.openai import OpenAIBackend
from calibration.backends.prompt import DEFAULT_PROMPT, DEFAULT_SYSTEM, prompt_messages, template_problems

ITEM = JudgeItem(
    run_id="r",
    qid="q-1",
    question="how long?",
    answer="It is 30 days.",
    expected=None,
    gold_text="Trials run for 30 days.",
    stratum="policy_lookup",
)


@pytest.mark.parametrize(
    "template",
    [
        "",
        "Q: $question\nA: $answer\nGold: ${gold_text}\nExpected: $expected ($stratum)",
        "It costs $$5; a bare $ or $5 stays as written",
    ],
)
def test_a_template_with_known_placeholders_has_no_problem(template):
    assert template_problems(template) == []


def test_each_unknown_placeholder_is_named_with_its_line_and_column():
    template = "Question: $question\nAnswer: $anser and ${gold}\n$answer"

    assert template_problems(template) == [
        "line 2, column 9: unknown placeholder $anser (known: $question, $answer, $expected, $gold_text, $stratum; "
        "write $$ for a dollar sign)",
        "line 2, column 20: unknown placeholder ${gold} (known: $question, $answer, $expected, $gold_text, $stratum; "
        "write $$ for a dollar sign)",
    ]


def test_the_messages_are_the_system_prompt_with_the_rubric_and_the_rendered_template():
    messages = prompt_messages(
        template="Q: $question | A: $answer | E: $expected | $$1", system="", rubric="Be kind.", item=ITEM
    )

    assert messages == [
        {"role": "system", "content": DEFAULT_SYSTEM + "\n\nRubric:\nBe kind."},
        {"role": "user", "content": "Q: how long? | A: It is 30 days. | E: (none given) | $1"},
    ]


def test_an_empty_template_renders_the_default_prompt():
    user = prompt_messages(template="", system="Grade.", rubric="", item=ITEM)

    assert user[0] == {"role": "system", "content": "Grade."}
    assert user[1]["content"] == DEFAULT_PROMPT.replace("$question", "how long?").replace(
        "$gold_text", "Trials run for 30 days."
    ).replace("$expected", "(none given)").replace("$answer", "It is 30 days.")


def test_the_openai_backend_sends_the_same_messages():
    backend = backend_for(
        "openai",
        model="m",
        prompt_template="A: $answer",
        params={"base_url": "http://127.0.0.1:9/v1", "system": "Sys."},
        rubric="R.",
    )

    assert isinstance(backend, OpenAIBackend)
    assert backend.messages(ITEM) == prompt_messages(template="A: $answer", system="Sys.", rubric="R.", item=ITEM)
