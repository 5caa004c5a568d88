"""The shared JSON Lines reader (evalapp.jsonl): what it refuses, by line and field path, and what it keeps."""
import pytest

from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import MAX_DEPTH, parse_json_text, read_jsonl, value_problems


def nested(levels: int) -> str:
    """A JSON object nesting `levels` containers in all (the object itself is the first)."""
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def test_nesting_up_to_the_limit_is_kept_and_one_more_is_refused():
    assert parse_json_text(nested(MAX_DEPTH))[1] is None
    assert parse_json_text(nested(MAX_DEPTH + 1), line=7) == (None, Problem("nested deeper than 64 levels", line=7))


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '{"a": "' + "[{" * 200 + '", "b": "\\"[[[["}'
    assert parse_json_text(text) == ({"a": "[{" * 200, "b": '"[[[['}, None)


@pytest.mark.parametrize("text,field,message", [
    ('{"a": NaN}', "a", "NaN is not a number JSON allows (write null, or a finite number)"),
    ('{"a": [0, {"b": -Infinity}]}', "a[1].b", "-Infinity is not a number JSON allows (write null, or a finite number)"),
    ('{"a": -1e400}', "a", "-1e400 is too large for a number"),
    ('{"a": 1' + "0" * 400 + '.5}', "a", "100000000000…0000.5 is too large for a number"),
    ('{"k\\u0000": 1}', "k\\u0000", "the key contains a NUL character (\\u0000), which cannot be stored"),
    ('{"a": ["\\ud800x"]}', "a[0]", "contains an unpaired surrogate (\\ud800), which is not valid Unicode"),
])
def test_refused_values_are_named_by_field_path(text, field, message):
    assert parse_json_text(text, line=2) == (None, Problem(message, line=2, field=field))


def test_several_refused_values_on_a_line_are_counted():
    value, problem = parse_json_text('{"a": NaN, "b": Infinity, "c": 1e999}')
    assert (value, problem.field) == (None, "a")
    assert problem.message.endswith("(and 2 more refused value(s) on this line)")


@pytest.mark.parametrize("text,value", [
    ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001F600"}),     # a surrogate pair is one character
    ('{"a": "\\\\u0000"}', {"a": "\\u0000"}),              # an escaped backslash, not a NUL
    ('{"a": 1e308, "b": -0.0, "c": 12345678901234567890}', {"a": 1e308, "b": -0.0, "c": 12345678901234567890}),
    ('{"a": "NaN", "Infinity": true}', {"a": "NaN", "Infinity": True}),
])
def test_values_python_and_the_database_agree_on_are_kept(text, value):
    assert parse_json_text(text) == (value, None)


def test_value_problems_walks_any_parsed_value_without_recursion():
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert value_problems({"x": deep}) == [Problem("nested deeper than 64 levels", field="x" + "[0]" * 63)]
    assert value_problems({"x": [float("nan"), "ok"]}) == [
        Problem("nan is not a number JSON allows (write null, or a finite number)", field="x[0]")]


def test_read_jsonl_numbers_lines_as_in_the_file(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": "\xff"}\n[]\n{"b": 2}')
    assert list(read_jsonl(path)) == [
        (1, {"a": 1}, None),
        (3, None, Problem("not UTF-8 (byte 0xff at column 8)", line=3)),
        (4, None, Problem("each line must be a JSON object, not an array", line=4)),
        (5, {"b": 2}, None),
    ]


def test_read_jsonl_refuses_a_file_without_records_unless_allowed(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\n \n\t\n")
    with pytest.raises(ServiceError) as exc:
        list(read_jsonl(path))
    assert (exc.value.message, exc.value.code, exc.value.status) == (f"{path}: the file has no records", 2, 400)
    assert list(read_jsonl(path, allow_empty=True)) == []
