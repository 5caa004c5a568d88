"""read_jsonl's fast path (orjson) gives exactly what the strict json path gives, or stands aside for it."""

import pytest

from evalapp import jsonl
from evalapp.jsonl import MAX_DEPTH, _fast_object, parse_json_text, read_jsonl

# Lines orjson reads: each must come out identical (types included: 1 is not 1.0, key order kept).
READ_ALIKE = [
    '{"a": 1, "b": 1.0, "c": -0, "d": -0.0, "e": 1E5, "f": 1.5e-7, "g": 5e-324, "h": 1e308}',
    '{"a": 123456789012345678, "b": -123456789012345678, "c": 0.1, "d": 2.5e+300}',
    '{"a": 1, "a": 2, "b": 3, "a": 4}',
    '{"b": "z", "a": {"d": [1, [2, {"e": null}]], "c": true}, "é": "ünïcødé ☃ \\u00e9 \\u2028"}',
    '{"s": "tab\\t nl\\n quote\\" slash\\/ back\\\\ bell\\u0007", "empty": "", "list": []}',
    '  {"spaced" :  [ 1 , 2 ] }  \t',
    '{"digits": "123456789012345678"}',  # 18 digits in a row: still orjson's
    "{}",
    '{"deep": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}",
]
# Lines orjson refuses or might read otherwise: the fast path must stand aside.
STANDS_ASIDE = [
    '{"a": 12345678901234567890123}',  # beyond 64 bits: orjson would read a float
    '{"a": -9223372036854775809}',
    '{"digits": "1234567890123456789"}',  # 19 digits in a row, here in a string: the strict path reads it
    '{"a": 1' + "0" * 400 + "}",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1e999}',
    '{"a": "\\u0000"}',
    '{"a": "\\ud800"}',
    '{"a": "\\ud83d\\ude00"}',
    '{"a": "\x01"}',
    '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
    "[1, 2]",
    "12345678901234567890123",
    '"text"',
    '{"a": 1,}',
    '{"a": 1} {"b": 2}',
]


@pytest.mark.parametrize("text", READ_ALIKE + STANDS_ASIDE)
def test_the_fast_path_gives_what_the_strict_path_gives_or_stands_aside(text):
    fast = _fast_object((text + "\n").encode("utf-8"))
    strict, problem = parse_json_text(text)
    if text in STANDS_ASIDE:
        assert fast is None
    else:
        assert problem is None and fast is not None
        assert repr(fast) == repr(strict)  # repr tells 1 from 1.0 and keeps key order


# read_jsonl checks a block of lines at once: a line to itself (every line orjson reads takes the block's fast
# path, every other its own), a few lines (blocks of both kinds), and the whole file in one block.
@pytest.mark.parametrize("block_bytes", [1, 200, 1 << 20])
def test_read_jsonl_reads_a_file_of_both_kinds_as_the_strict_path_does(tmp_path, monkeypatch, block_bytes):
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block_bytes)
    lines = READ_ALIKE + STANDS_ASIDE
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\r\n", encoding="utf-8")
    got = [(number, repr(obj), problem) for number, obj, problem in read_jsonl(path)]
    expected = []
    for number, text in enumerate(lines, start=1):
        value, problem = parse_json_text(text, line=number)
        # read_jsonl names a line that is not an object itself: checked below by its message.
        not_object = problem is None and not isinstance(value, dict)
        expected.append((number, repr(value) if problem is None and not not_object else "None", problem, not_object))
    assert [g[:2] for g in got] == [e[:2] for e in expected]
    for (_, _, got_problem), (_, _, want, not_object) in zip(got, expected, strict=True):
        if not_object:
            assert got_problem is not None and got_problem.message.startswith("each line must be a JSON object")
        else:
            assert got_problem == want
