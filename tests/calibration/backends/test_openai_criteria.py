"""The openai backend scoring criteria against the local OpenAI-compatible server: a JSON schema with one
enum per criterion, falling back to a JSON object and then to the prompt alone when the server refuses a
response format, and a strict reading of the reply (a missing or out-of-range value is invalid)."""

from calibration.backends import JudgeItem, backend_for
from calibration.backends.criteria_format import criteria_values, reply_object, response_schema

CRITERIA = [
    {"name": "faithfulness", "kind": "ordinal", "values": ["1", "2", "3", "4", "5"]},
    {"name": "tone", "kind": "categorical", "values": ["rude", "neutral", "kind"]},
]
ITEM = JudgeItem(
    run_id="r", qid="q", question="how long?", answer="It is 30 days.", expected="30 days", gold_text="30 days."
)


def backend(server):
    return backend_for("openai", model="judge-1", params={"base_url": server.url}, criteria=CRITERIA)


def with_answer(text):
    return JudgeItem(**{**ITEM.__dict__, "answer": text})


def test_the_schema_names_every_criterion_as_a_required_enum():
    schema = response_schema(CRITERIA)["json_schema"]["schema"]
    assert schema["required"] == ["verdict", "faithfulness", "tone"]
    assert schema["properties"]["faithfulness"] == {"type": "string", "enum": ["1", "2", "3", "4", "5"]}
    assert schema["additionalProperties"] is False


def test_replies_are_read_strictly():
    assert criteria_values({"faithfulness": 4, "tone": "kind"}, CRITERIA) == {"faithfulness": "4", "tone": "kind"}
    assert criteria_values({"faithfulness": "6", "tone": True}, CRITERIA) == {
        "faithfulness": "invalid",
        "tone": "invalid",
    }
    assert criteria_values(reply_object("no JSON here"), CRITERIA) == {"faithfulness": "invalid", "tone": "invalid"}
    assert reply_object('```json\n{"tone": "kind"}\n```') == {"tone": "kind"}


def test_a_json_schema_server_answers_every_criterion(judge_server):
    b = backend(judge_server)
    good, bad = b.judge(ITEM), b.judge(with_answer("no idea"))
    assert (good.verdict, good.values, good.response_format) == (
        "correct",
        {"faithfulness": "5", "tone": "kind"},
        "json_schema",
    )
    assert (bad.verdict, bad.values) == ("incorrect", {"faithfulness": "1", "tone": "rude"})
    assert judge_server.formats == ["json_schema", "json_schema"]
    assert "- faithfulness: one of 1, 2, 3, 4, 5 (worst first)" in b.messages(ITEM)[-1]["content"]


def test_a_server_that_refuses_a_format_is_asked_with_the_next_and_later_items_start_there(judge_server):
    judge_server.reject_formats = {"json_schema"}
    b = backend(judge_server)
    first, second = b.judge(ITEM), b.judge(ITEM)
    assert judge_server.formats == ["json_schema", "json_object", "json_object"]
    assert (first.response_format, second.response_format) == ("json_object", "json_object")
    assert first.values == {"faithfulness": "5", "tone": "kind"}
    judge_server.reject_formats = {"json_schema", "json_object"}
    judge_server.formats.clear()
    plain = backend(judge_server).judge(ITEM)
    assert judge_server.formats == ["json_schema", "json_object", ""]
    assert (plain.verdict, plain.values, plain.response_format) == (
        "correct",
        {"faithfulness": "5", "tone": "kind"},
        "plain",
    )


def test_a_missing_or_out_of_range_value_or_no_json_is_invalid_for_that_criterion(judge_server):
    b = backend(judge_server)
    partial = b.judge(with_answer("30 days [[BADCRIT]]"))
    assert (partial.verdict, partial.values) == ("correct", {"faithfulness": "invalid", "tone": "invalid"})
    garbage = b.judge(with_answer("30 days [[GARBAGE]]"))
    assert (garbage.verdict, garbage.values) == ("invalid", {"faithfulness": "invalid", "tone": "invalid"})
    malformed = b.judge(with_answer("30 days [[MALFORMED]]"))
    assert (malformed.verdict, malformed.values) == ("invalid", {"faithfulness": "invalid", "tone": "invalid"})
