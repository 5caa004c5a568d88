"""The rows an import stores are byte for byte what the json module made of each line before the fast path
(orjson for the parse, a C encoder built once for canonical JSON and the JSON columns): the canonical text,
its sha256, the dataset hash and an answer's JSON column text, on lines written by hand in every style and
holding what the two parsers could read differently (floats, long integers, escapes, repeated keys)."""

import hashlib
import json

import pytest
from django.db import connection

from annotation.hashing import dataset_hash
from annotation.models import Answer, Example, VersionEntry
from annotation.services.datasets import questions_import
from annotation.services.runs import run_import

# Written as text, not json.dumps: spacing, key order, escapes and number spellings vary. The last two
# lines hold 19 digits and more in a row, so the strict json path reads them; the others orjson reads.
QUESTION_LINES = [
    '{"qid":"q-a","question":"x","stratum":"s","f":[0.1,1e16,-0.0,1.5e-7,123.0,1E+2,5e-324,1.7976931348623157e308]}',
    '{ "stratum" : "s" , "qid" : "q-b" , "question" : "caf\\u00e9 \\u2028 \\"q\\" \\n \\t \\/ \\\\ ☃ 😀" }',
    '{"qid":"q-c","question":"dup","stratum":"s","k":1,"k":2,"z":{"b":[1,{"y":null,"x":true}],"a":false}}',
    '{"qid":"q-d","question":"ints","stratum":"s","i":[0,-0,9007199254740993,-123456789012345678]}',
    '{"qid":"q-e","question":"long","stratum":"s","i":12345678901234567890123,"j":-9223372036854775809}',
    '{"qid":"q-f","question":"digits in text 1234567890123456789012","stratum":"s","e":"\\ud83d\\ude00"}',
]
ANSWER_LINES = [
    '{"qid":"q-a","answer":"a","correct":true,"retrieved":[{"rank":1,"chunk_id":"c#1","score":0.30000000000000004}],'
    '"prompt_chunks":["c#1","é"],"latency_ms":812.0,"notes":{"ü":[1,null,1e-7]}}',
    '{"qid":"q-b","answer":"caf\\u00e9\\n","correct":false,"retrieved":[],"prompt_chunks":[],"z":{},"a":[]}',
    '{"qid":"q-c","answer":"dup","k":1,"k":2.5,"nested":{"b":1,"a":2}}',
    '{"qid":"q-e","answer":"long","retrieved":[{"chunk_id":"c#2","rank":2,"big":12345678901234567890123}]}',
]


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _reference(record):
    """What the import stored before: the json module's canonical text and its sha256."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.django_db
def test_question_rows_are_the_json_modules_text_and_hashes(tmp_path):
    result = questions_import(path=_write(tmp_path / "q.jsonl", QUESTION_LINES), dataset_name="bytes")
    records = [json.loads(line) for line in QUESTION_LINES]
    want = {r["qid"]: _reference(r) for r in records}
    stored = {e.qid: (e.canonical, e.sha256) for e in Example.objects.all()}
    assert stored == want
    assert dict(VersionEntry.objects.values_list("qid", "example_id")) == {q: s for q, (_, s) in want.items()}
    assert result.dataset_hash == dataset_hash((q, s) for q, (_, s) in want.items())


@pytest.mark.django_db
def test_answer_json_columns_are_the_json_modules_text(tmp_path):
    questions_import(path=_write(tmp_path / "q.jsonl", QUESTION_LINES), dataset_name="bytes")
    header = json.dumps({"run_id": "r-bytes", "system": "s", "dataset": "bytes"})
    run_import(path=_write(tmp_path / "run.jsonl", [header, *ANSWER_LINES]))
    known = {"qid", "answer", "correct", "retrieved", "prompt_chunks"}
    want = {}
    for line in ANSWER_LINES:
        a = json.loads(line)
        extra = {k: v for k, v in a.items() if k not in known}
        want[a["qid"]] = (a["answer"], a.get("correct"), a.get("retrieved") or [], a.get("prompt_chunks") or [], extra)
        if connection.vendor == "sqlite":
            # The very text Django's JSONField (json.dumps with its defaults) writes.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT retrieved, prompt_chunks, extra FROM annotation_answer WHERE qid = %s", [a["qid"]]
                )
                assert cursor.fetchall() == [
                    (json.dumps(a.get("retrieved") or []), json.dumps(a.get("prompt_chunks") or []), json.dumps(extra))
                ]
    got = {
        q: rest
        for q, *rest in Answer.objects.values_list("qid", "answer", "correct", "retrieved", "prompt_chunks", "extra")
    }
    assert {q: tuple(v) for q, v in got.items()} == want
    # Types survive too: 812.0 stays a float, the long integer an int (PostgreSQL's jsonb orders keys its way).
    assert json.dumps(got["q-a"][4], sort_keys=True) == '{"latency_ms": 812.0, "notes": {"\\u00fc": [1, null, 1e-07]}}'
    assert got["q-e"][2][0]["big"] == 12345678901234567890123
