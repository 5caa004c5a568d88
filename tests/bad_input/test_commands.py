"""Every bad input to a command exits 2 with a message naming the line and field, and writes nothing.
(Past 400 lines: it is a table of cases, one row an input, read as one list.)"""

import json

import pytest

from tests.bad_input.conftest import ANSWERS, RUN, counts, run_cmd
from tests.conftest import write_jsonl


def _args(world, command: str, path: str) -> list[str]:
    return {
        "import_corpus": ["import_corpus", path],
        "import_questions": ["import_questions", path, "--dataset", "support"],
        "import_run": ["import_run", path],
        "import_labels": ["import_labels", path],
        "import_verdicts": ["import_verdicts", path, "--judge-version", str(world["judge_version"].pk)],
        "agreement": ["agreement", path],
        "create_queue": ["create_queue", "second", "--items", path, "--annotator", "ann1", "--overlap", "1"],
    }[command]


IMPORTS = [
    "import_corpus",
    "import_questions",
    "import_run",
    "import_labels",
    "import_verdicts",
    "agreement",
    "create_queue",
]

# (name, the bad third line, what stderr says about it); lines 1 and 2 are blank, so line numbers are counted
# from the file and every command meets the fault first.
BAD_LINES = [
    ("not utf-8", b'{"a": "ab\xff"}', "line 3: not UTF-8 (byte 0xff at column 10)"),
    ("latin-1 text", '{"a": "café"}'.encode("latin-1"), "line 3: not UTF-8 (byte 0xe9 at column 11)"),
    ("nested 65 deep", b'{"a": ' + b"[" * 64 + b"]" * 64 + b"}", "line 3: nested deeper than 64 levels"),
    ("nested 100000 deep", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "line 3: nested deeper than 64 levels"),
    (
        "NaN",
        b'{"a": {"b": [1, NaN]}}',
        "line 3, field 'a.b[1]': NaN is not a number JSON allows (write null, or a finite number)",
    ),
    ("Infinity", b'{"x": Infinity}', "line 3, field 'x': Infinity is not a number JSON allows"),
    ("-Infinity", b'{"x": -Infinity}', "line 3, field 'x': -Infinity is not a number JSON allows"),
    ("1e999", b'{"a": 1e999}', "line 3, field 'a': 1e999 is too large for a number"),
    (
        "5000 digits",
        b'{"a": ' + b"1" * 5000 + b"}",
        "line 3, field 'a': 111111111111…111111 is too large for a number (5000 digits)",
    ),
    ("NUL", b'{"a": "x\\u0000y"}', "line 3, field 'a': contains a NUL character (\\u0000), which cannot be stored"),
    (
        "lone surrogate",
        b'{"a": "\\udc00"}',
        "line 3, field 'a': contains an unpaired surrogate (\\udc00), which is not valid Unicode",
    ),
    ("an array", b"[1, 2]", "line 3: each line must be a JSON object, not an array"),
    ("a string", b'"text"', "line 3: each line must be a JSON object, not a string"),
    ("malformed", b'{"a": ', "line 3: malformed JSON: Expecting value at column 7"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("command", IMPORTS)
@pytest.mark.parametrize("name,line,message", BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_a_bad_line_exits_2_naming_line_and_field_and_writes_nothing(world, command, name, line, message):
    path = world["tmp"] / "bad.jsonl"
    path.write_bytes(b"\n\n" + line + b"\n")
    before = counts()
    code, out, err = run_cmd(*_args(world, command, str(path)))
    assert code == 2, err
    assert message in err
    assert "Traceback" not in err and out == ""
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("command", IMPORTS)
@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\n\t\n"], ids=["empty", "one blank line", "blank lines"])
def test_an_empty_file_is_one_rule_for_every_import(world, command, content):
    path = world["tmp"] / "empty.jsonl"
    path.write_bytes(content)
    before = counts()
    code, _, err = run_cmd(*_args(world, command, str(path)))
    assert (code, err.splitlines()[0]) == (
        2,
        f"error: {path}: the file has no records"
        + (" (the first line must be the run record)" if command == "import_run" else ""),
    )
    assert counts() == before


def _good_lines(world, command: str) -> list[dict]:
    return {
        "import_corpus": [{"doc_id": "bom:1", "title": "T", "text": "Byte-order marks are skipped.", "source": "s"}],
        "import_questions": [{"qid": "q-0001", "question": "q?", "stratum": "policy_lookup"}],
        "import_run": [{**RUN, "run_id": "r-bom"}, *ANSWERS],
        # r1 sits in a labelling queue, so its labels are made there: label a run that is in none.
        "import_labels": [{"run_id": "r-free", "qid": "q-0002", "annotator": "ann2", "verdict": "incorrect"}],
        "import_verdicts": [{"run_id": "r1", "qid": "q-0001", "verdict": "correct"}],
        "agreement": [{"id": 1, "a": "correct", "b": "correct"}, {"id": 2, "a": "correct", "b": "incorrect"}],
        "create_queue": [{"run_id": "r1", "qid": "q-0001"}],
    }[command]


@pytest.mark.django_db
@pytest.mark.parametrize("command", IMPORTS)
def test_a_utf8_byte_order_mark_on_the_first_line_is_accepted(world, command):
    if command == "import_labels":
        run_cmd("import_run", str(write_jsonl(world["tmp"] / "free.jsonl", [{**RUN, "run_id": "r-free"}, *ANSWERS])))
    path = write_jsonl(world["tmp"] / "bom.jsonl", _good_lines(world, command))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, out, err = run_cmd(*_args(world, command, str(path)), "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), dict)


@pytest.mark.django_db
def test_a_byte_order_mark_after_the_first_line_is_refused_by_line(world):
    path = world["tmp"] / "bom2.jsonl"
    path.write_bytes(b'{"doc_id": "d", "text": "t"}\n\xef\xbb\xbf{"doc_id": "e", "text": "t"}\n')
    code, _, err = run_cmd("import_corpus", str(path))
    assert code == 2 and "line 2: a UTF-8 byte-order mark is allowed only at the start of the file" in err


@pytest.mark.django_db
def test_nan_in_a_question_record_is_never_stored_or_exported(world):
    path = write_jsonl(
        world["tmp"] / "q.jsonl",
        ['{"qid": "q-1", "question": "x", "stratum": "policy_lookup", "meta": {"score": NaN}}'],
    )
    before = counts()
    code, _, err = run_cmd("import_questions", str(path), "--dataset", "support")
    assert code == 2 and "line 1, field 'meta.score': NaN is not a number JSON allows" in err
    assert counts() == before
    code, out, _ = run_cmd("export_questions", "--dataset", "support")
    assert code == 0 and "NaN" not in out


TOO_LONG = [
    (
        "import_run",
        [{**RUN, "run_id": "r" * 201}, *ANSWERS],
        "line 1, field 'run_id': is 201 characters long; at most 200 are allowed",
    ),
    (
        "import_run",
        [{**RUN, "run_id": "r2", "system": "s" * 201}, *ANSWERS],
        "line 1, field 'system': is 201 characters long; at most 200 are allowed",
    ),
    (
        "import_run",
        [{**RUN, "run_id": "r2", "model_snapshot": "m" * 301}, *ANSWERS],
        "line 1, field 'model_snapshot': is 301 characters long; at most 300 are allowed",
    ),
    (
        "import_run",
        [{**RUN, "run_id": "r2", "dataset": None}, {"qid": "q" * 201, "answer": "a"}],
        "line 2, field 'qid': is 201 characters long; at most 200 are allowed",
    ),
    (
        "import_questions",
        [{"qid": "q" * 201, "question": "x", "stratum": "policy_lookup"}],
        "line 1, field 'qid': is 201 characters long; at most 200 are allowed",
    ),
    (
        "import_questions",
        [{"qid": "q-1", "question": "x", "stratum": "s" * 101}],
        "line 1, field 'stratum': is 101 characters long; at most 100 are allowed",
    ),
    (
        "import_corpus",
        [{"doc_id": "d" * 501, "text": "t"}],
        "line 1, field 'doc_id': is 501 characters long; at most 500 are allowed",
    ),
    (
        "import_corpus",
        [{"doc_id": "d", "title": "t" * 1001, "text": "t"}],
        "line 1, field 'title': is 1001 characters long; at most 1000 are allowed",
    ),
    (
        "import_corpus",
        [{"doc_id": "d", "source": "s" * 201, "text": "t"}],
        "line 1, field 'source': is 201 characters long; at most 200 are allowed",
    ),
    (
        "import_corpus",
        [{"chunk_id": "d#" + "c" * 600, "text": "t"}],
        "line 1, field 'chunk_id': is 602 characters long; at most 600 are allowed",
    ),
    (
        "import_corpus",
        [{"chunk_id": "d" * 590 + "#0001", "text": "t"}],
        "line 1, field 'chunk_id': the document id before '#' is 590 characters long; at most 500 are allowed",
    ),
    (
        "import_labels",
        [{"run_id": "r1", "qid": "q-0001", "annotator": "a" * 151, "verdict": "correct"}],
        "line 1, field 'annotator': is 151 characters long; at most 150 are allowed",
    ),
    (
        "import_labels",
        [{"run_id": "r1", "qid": "q-0001", "annotator": "ann2", "verdict": "correct", "rationale": "r" * 10_001}],
        "line 1, field 'rationale': is 10001 characters long; at most 10000 are allowed",
    ),
    (
        "import_verdicts",
        [{"run_id": "r" * 201, "qid": "q-0001", "verdict": "correct"}],
        "line 1, field 'run_id': is 201 characters long; at most 200 are allowed",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "command,rows,message", TOO_LONG, ids=[f"{c}-{m.split(',')[1].split(':')[0].strip()}" for c, _, m in TOO_LONG]
)
def test_text_past_its_column_is_refused_by_line_and_field_on_every_database(world, command, rows, message):
    path = write_jsonl(world["tmp"] / "long.jsonl", rows)
    before = counts()
    code, _, err = run_cmd(*_args(world, command, str(path)))
    assert code == 2 and message in err, err
    assert counts() == before


WRONG_TYPES = [
    (
        "import_questions",
        [{"qid": 5, "question": "x", "stratum": "policy_lookup"}],
        "line 1, field 'qid': must be a non-empty string",
    ),
    (
        "import_labels",
        [{"run_id": "r1", "qid": 5, "annotator": "ann2", "verdict": "correct"}],
        "line 1, field 'qid': must be a non-empty string",
    ),
    (
        "import_labels",
        [{"run_id": "r1", "qid": "q-0001", "annotator": "ann2", "verdict": "correct", "labelled_at": "yesterday"}],
        "line 1, field 'labelled_at': not an ISO 8601 date-time: 'yesterday'",
    ),
    (
        "import_labels",
        [
            {
                "run_id": "r1",
                "qid": "q-0001",
                "annotator": "ann2",
                "verdict": "correct",
                "labelled_at": "2026-02-30T10:00:00",
            }
        ],
        "line 1, field 'labelled_at': not an ISO 8601 date-time: '2026-02-30T10:00:00'",
    ),
    (
        "import_labels",
        [{"run_id": "r1", "qid": "q-0001", "annotator": "ann2", "verdict": "correct", "labelled_at": 20260520}],
        "line 1, field 'labelled_at': not an ISO 8601 date-time: 20260520",
    ),
    (
        "import_labels",
        [
            {
                "run_id": "r1",
                "qid": "q-0001",
                "annotator": "ann2",
                "verdict": "correct",
                "labelled_at": "9999-12-31T23:59:59-01:00",
            }
        ],
        "line 1, field 'labelled_at': '9999-12-31T23:59:59-01:00' is outside the dates that can be stored",
    ),
    (
        "import_run",
        [{**RUN, "run_id": "r2", "started_at": "2026-13-01"}, *ANSWERS],
        "line 1, field 'started_at': not an ISO 8601 date-time: '2026-13-01'",
    ),
    (
        "import_run",
        [{**RUN, "run_id": "r2"}, {"qid": "q-0001", "answer": "a", "retrieved": [{"chunk_id": "c", "rank": "first"}]}],
        "line 2, field 'retrieved': must be a list of",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "command,rows,message", WRONG_TYPES, ids=[m.split(":")[0] + "-" + c for c, _, m in WRONG_TYPES]
)
def test_wrong_types_in_records_are_named(world, command, rows, message):
    path = write_jsonl(world["tmp"] / "types.jsonl", rows)
    before = counts()
    code, _, err = run_cmd(*_args(world, command, str(path)))
    assert code == 2 and message in err, err
    assert counts() == before


STRATA = [
    (["a=nan", "b=100"], "field 'a': share 'nan' is not a finite number (stratum 'a'; give a percentage)"),
    (["a=inf"], "field 'a': share 'inf' is not a finite number (stratum 'a'; give a percentage)"),
    (["a=-inf", "b=100"], "field 'a': share '-inf' is not a finite number"),
    (["a=-5", "b=105"], "field 'a': share -5 is outside 0..100 (stratum 'a')"),
    (["a=abc"], "field 'a': share 'abc' is not a number (stratum 'a'; give a percentage)"),
    (["a="], "field 'a': share '' is not a number (stratum 'a'; give a percentage)"),
    (["=5"], "'=5' is not STRATUM=SHARE: the stratum name is missing"),
    (["a=5"], "error: the strata shares sum to 5, not 100; nothing was changed"),
    (["a=40", "a=60"], "field 'a': given twice"),
    (["s" * 101 + "=100"], "is 101 characters long; at most 100 are allowed"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("shares,message", STRATA, ids=[" ".join(s)[:20] for s, _ in STRATA])
def test_set_strata_names_the_stratum_and_the_value(world, shares, message):
    before = counts()
    code, _, err = run_cmd("set_strata", "--dataset", "fresh", *shares)
    assert code == 2 and message in err, err
    assert counts() == before


OPTIONS = [
    (["compare", "r1", "r2", "--seed", "-1"], "field 'seed': must be from 0 to 4294967295, not -1"),
    (["compare", "r1", "r2", "--seed", str(2**32)], "field 'seed': must be from 0 to 4294967295, not 4294967296"),
    (["compare", "r1", "r2", "--iters", str(10**9)], "field 'iters': must be from 1 to 100000, not 1000000000"),
    (["compare", "r1", "r2", "--iters", "0"], "field 'iters': must be from 1 to 100000, not 0"),
    (["agreement", "PAIRS", "--seed", "-1"], "field '--seed': must be from 0 to 4294967295, not -1"),
    (["agreement", "PAIRS", "--iters", str(10**9)], "field '--iters': must be from 1 to 100000, not 1000000000"),
    (["calibrate", "JV", "--dataset", "support", "--seed", "-1"], "field 'seed': must be from 0 to 2147483647, not -1"),
    (
        ["calibrate", "JV", "--dataset", "support", "--seed", str(2**31)],
        "field 'seed': must be from 0 to 2147483647, not 2147483648",
    ),
    (["calibrate", "JV", "--dataset", "support", "--sample", "0"], "field 'sample': must be from 1 to 1000000, not 0"),
    (
        ["calibrate", "JV", "--dataset", "support", "--sample", str(10**12)],
        "field 'sample': must be from 1 to 1000000, not 1000000000000",
    ),
    (["calibrate", str(10**30), "--dataset", "support"], f"unknown judge version '{10**30}'"),
    (["judge_gate", str(10**30)], f"unknown judge version '{10**30}'"),
    (["judge_gate", "abc"], "unknown judge version 'abc'"),
    (["relabel_audit", str(10**30)], f"unknown relabel audit '{10**30}'"),
    (["export_labels", "--queue", str(10**30)], f"unknown queue '{10**30}'"),
    (
        ["label_time", "--dataset", "support", "--min-seconds", "nan"],
        "field 'min_seconds': must be a number of seconds from 0 to 86400, not nan",
    ),
    (["label_time", "--queue", str(10**30)], f"unknown queue '{10**30}'"),
    (["import_corpus", "CORPUS", "--max-chars", "0"], "field 'max_chars': must be from 1 to 1000000, not 0"),
    (
        ["create_queue", "x" * 201, "--run", "r1", "--annotator", "ann1", "--overlap", "1"],
        "field 'name': is 201 characters long; at most 200 are allowed",
    ),
    (
        ["create_queue", "second", "--run", "r1", "--annotator", "ann1", "--overlap", "1", "--seed", "-1"],
        "field 'seed': must be from 0 to 4294967295, not -1",
    ),
    (
        ["create_queue", "second", "--run", "r1", "--annotator", "ann1", "--overlap", "1", "--sample", str(10**12)],
        "field 'sample': must be from 1 to 1000000",
    ),
    (
        [
            "create_queue",
            "second",
            "--run",
            "r1",
            "--annotator",
            "ann1",
            "--overlap",
            "1",
            "--lease-seconds",
            str(10**12),
        ],
        "field 'lease_seconds': must be a whole number of seconds from 60 to 604800",
    ),
    (
        ["create_judge_version", "--judge", "j" * 201, "--backend", "replay"],
        "field 'judge': must be a slug (letters, digits, - and _) of at most 200 characters",
    ),
    (
        ["create_judge_version", "--judge", "j", "--backend", "replay", "--threshold", "nan"],
        "field 'threshold': kappa threshold nan is outside -1..1",
    ),
    (
        ["create_judge_version", "--judge", "j", "--backend", "replay", "--min-n", str(10**12)],
        "field 'min_n': must be from 1 to 1000000",
    ),
    (["add_user", "u" * 151, "--role", "annotator"], "field 'username': is 151 characters long; at most 150"),
    (
        ["publish_dataset", "--dataset", "support", "--note", "n" * 501],
        "field 'note': is 501 characters long; at most 500 are allowed",
    ),
    (["import_questions", "QUESTIONS", "--dataset", "x" * 201], "field 'dataset': must be a slug"),
    (["import_questions", "QUESTIONS", "--dataset", "has space"], "field 'dataset': must be a slug"),
    (["relabel_audit", "--run", "r1", "--auditor", "ann2", "--sample", "0"], "field 'sample': must be from 1"),
    (
        ["relabel_audit", "--run", "r1", "--auditor", "ann2", "--name", "n" * 200],
        "field 'name': is 200 characters long; at most 193 are allowed",
    ),
    (
        ["grade_run", "r1", "--judge-version", "JV", "--force", "--reason", "r" * 10_001],
        "field 'reason': is 10001 characters long; at most 10000 are allowed",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize("args,message", OPTIONS, ids=[" ".join(a)[:40] for a, _ in OPTIONS])
def test_options_out_of_range_exit_2_naming_the_option_and_its_range(world, args, message):
    from annotation.services.runs import run_import

    run_import(path=write_jsonl(world["tmp"] / "r2.jsonl", [{**RUN, "run_id": "r2"}, *ANSWERS]))
    files = {
        "PAIRS": write_jsonl(world["tmp"] / "pairs.jsonl", [{"id": 1, "a": "x", "b": "y"}]),
        "CORPUS": write_jsonl(world["tmp"] / "c.jsonl", [{"doc_id": "d", "text": "t"}]),
        "QUESTIONS": write_jsonl(world["tmp"] / "q.jsonl", [{"qid": "q", "question": "q", "stratum": "s"}]),
    }
    args = [str(files[a]) if a in files else str(world["judge_version"].pk) if a == "JV" else a for a in args]
    before = counts()
    code, _, err = run_cmd(*args)
    assert code == 2 and message in err, err
    assert "Traceback" not in err
    assert counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args",
    [
        ["create_queue", "second", "--run", "r1", "--annotator", "ann1", "--overlap", "1", "--rubric-file", "FILE"],
        ["relabel_audit", "--run", "r1", "--auditor", "ann2", "--rubric-file", "FILE"],
        ["create_judge_version", "--judge", "j", "--backend", "replay", "--prompt-file", "FILE"],
        ["create_judge_version", "--judge", "j", "--backend", "replay", "--rubric-file", "FILE"],
    ],
    ids=["create_queue", "relabel_audit", "prompt-file", "rubric-file"],
)
def test_text_files_that_are_not_utf8_are_named_by_line_and_column(world, args):
    path = world["tmp"] / "rubric.txt"
    path.write_bytes("Correct when it says thirty days.\nSé précis.\n".encode("latin-1"))
    before = counts()
    code, _, err = run_cmd(*[str(path) if a == "FILE" else a for a in args])
    assert code == 2 and f"{path}: line 2: not UTF-8 (byte 0xe9 at column 2)" in err, err
    assert counts() == before


@pytest.mark.django_db
def test_a_judge_param_json_cannot_read_as_a_finite_number_stays_a_string(world):
    code, out, err = run_cmd(
        "create_judge_version",
        "--judge",
        "j",
        "--backend",
        "replay",
        "--param",
        "x=1e999",
        "--param",
        "y=NaN",
        "--param",
        "z=3",
        "--json",
    )
    assert code == 0, err
    from calibration.models import JudgeVersion

    assert JudgeVersion.objects.get(pk=json.loads(out)["judge_version"]).params == {"x": "1e999", "y": "NaN", "z": 3}
