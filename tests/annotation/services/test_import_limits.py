"""Question and run imports at the limit: the rows they store are exactly what they stored before the
fast path (hashes, canonical text, JSON columns), canonical JSON is built once per record, a run file
is streamed, and a bad line still writes nothing."""

import hashlib
import json
import tracemalloc

import pytest
from django.db import connection

from annotation import hashing
from annotation.models import Answer, DatasetVersion, Example, Run, VersionEntry
from annotation.services.datasets import questions_import
from annotation.services.runs import run_import
from evalapp.errors import ServiceError
from tests.annotation.services.conftest import run_record
from tests.conftest import question, write_jsonl

RECORDS = [
    question("q-2", expected="30 days", grading="rubric", gold_text="Trials run thirty (30) days — «café»", extra=None),
    question("q-1", custom={"b": [1, 2.5, None], "a": "ü"}, stratum="no_answer"),
]


def canonical(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha(record):
    return hashlib.sha256(canonical(record).encode("utf-8")).hexdigest()


def raw_rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


@pytest.mark.django_db
def test_question_import_stores_each_record_by_its_hash_with_its_canonical_text(tmp_path):
    result = questions_import(path=write_jsonl(tmp_path / "q.jsonl", RECORDS), dataset_name="support")
    assert sorted(raw_rows("SELECT sha256, qid, stratum, canonical FROM annotation_example")) == sorted(
        (sha(r), r["qid"], r["stratum"], canonical(r)) for r in RECORDS
    )
    version = DatasetVersion.objects.get()
    assert sorted(VersionEntry.objects.values_list("version_id", "qid", "example_id", "stratum")) == [
        (version.pk, "q-1", sha(RECORDS[1]), "no_answer"),
        (version.pk, "q-2", sha(RECORDS[0]), "policy_lookup"),
    ]
    lines = "\n".join(f"{r['qid']}\t{sha(r)}" for r in sorted(RECORDS, key=lambda r: r["qid"]))
    assert result.dataset_hash == "sha256:" + hashlib.sha256(lines.encode()).hexdigest()
    # An example another version already stores is kept once, not written twice.
    more = [*RECORDS, question("q-3")]
    questions_import(path=write_jsonl(tmp_path / "q2.jsonl", more), dataset_name="other")
    assert Example.objects.count() == 3 and VersionEntry.objects.count() == 5


@pytest.mark.django_db
def test_question_import_builds_canonical_json_once_per_record(tmp_path, monkeypatch):
    calls = []
    real = hashing.canonical_json

    def counting(record):
        calls.append(record.get("qid"))
        return real(record)

    monkeypatch.setattr(hashing, "canonical_json", counting)
    questions_import(path=write_jsonl(tmp_path / "q.jsonl", RECORDS), dataset_name="support")
    assert sorted(calls) == ["q-1", "q-2"]


@pytest.mark.django_db
def test_a_bad_question_line_after_good_ones_writes_nothing(tmp_path):
    records = [question(f"q-{i}") for i in range(50)] + [question("q-bad", grading="vibes")]
    with pytest.raises(ServiceError) as caught:
        questions_import(path=write_jsonl(tmp_path / "q.jsonl", records), dataset_name="support")
    assert [(p.line, p.field) for p in caught.value.problems] == [(51, "grading")]
    assert (Example.objects.count(), VersionEntry.objects.count(), DatasetVersion.objects.count()) == (0, 0, 0)


ANSWER_LINES = [
    {
        "qid": "q-0001",
        "answer": "A month — «no» roll-over.",
        "correct": True,
        "retrieved": [{"chunk_id": "confluence:PRICE/8821#0001", "rank": 1}],
        "prompt_chunks": ["confluence:PRICE/8821#0001"],
        "latency_ms": 812,
        "notes": {"ü": [1, None]},
    },
    {"qid": "q-0002", "answer": "Every 30 days.", "correct": False, "retrieved": [], "prompt_chunks": []},
    {"qid": "q-0003", "answer": "I don't know."},
]


@pytest.mark.django_db
def test_run_import_stores_each_answer_as_before(tmp_path, loaded):
    result = run_import(path=write_jsonl(tmp_path / "run.jsonl", [run_record(), *ANSWER_LINES]))
    assert (result.run_id, result.answers) == ("r1", 3)
    run = Run.objects.get()
    assert run.record == run_record() and run.dataset_version.dataset_hash == loaded.dataset_hash
    rows = list(
        Answer.objects.order_by("qid").values_list(
            "run_id",
            "qid",
            "answer",
            "correct",
            "retrieved",
            "prompt_chunks",
            "extra",
            "final_verdict",
            "final_source",
            "final_changed_at",
        )
    )
    assert rows == [
        (
            run.pk,
            "q-0001",
            "A month — «no» roll-over.",
            True,
            [{"chunk_id": "confluence:PRICE/8821#0001", "rank": 1}],
            ["confluence:PRICE/8821#0001"],
            {"latency_ms": 812, "notes": {"ü": [1, None]}},
            "",
            "",
            None,
        ),
        (run.pk, "q-0002", "Every 30 days.", False, [], [], {}, "", "", None),
        (run.pk, "q-0003", "I don't know.", None, [], [], {}, "", "", None),
    ]
    if connection.vendor == "sqlite":
        # The JSON columns hold the very text Django's JSONField writes.
        assert raw_rows("SELECT retrieved, prompt_chunks, extra FROM annotation_answer WHERE qid = 'q-0001'") == [
            (
                json.dumps(ANSWER_LINES[0]["retrieved"]),
                json.dumps(ANSWER_LINES[0]["prompt_chunks"]),
                json.dumps({"latency_ms": 812, "notes": {"ü": [1, None]}}),
            )
        ]


@pytest.mark.django_db
def test_a_bad_answer_after_good_ones_writes_nothing(tmp_path, loaded):
    lines = [run_record(), *ANSWER_LINES[:2], {"qid": "q-0003", "answer": "x", "correct": "yes"}]
    with pytest.raises(ServiceError) as caught:
        run_import(path=write_jsonl(tmp_path / "run.jsonl", lines))
    assert [(p.line, p.field) for p in caught.value.problems] == [(4, "correct")]
    assert (Run.objects.count(), Answer.objects.count()) == (0, 0)


def _peak_import(tmp_path, name, n):
    answers = [{"qid": f"q-{i:05d}", "answer": f"{i} " + "word " * 400} for i in range(n)]
    path = write_jsonl(tmp_path / f"{name}.jsonl", [run_record(run_id=name, dataset="big"), *answers])
    tracemalloc.start()
    try:
        run_import(path=path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.django_db
def test_run_import_memory_does_not_grow_with_the_answers_text(tmp_path):
    questions_import(
        path=write_jsonl(tmp_path / "q.jsonl", [question(f"q-{i:05d}") for i in range(12000)]), dataset_name="big"
    )
    # Both sizes fill the write pipeline (a batch of 2000 answers being written, one waiting, one being read);
    # past it, more answers add only their qids.
    small = _peak_import(tmp_path, "small", 6500)
    large = _peak_import(tmp_path, "large", 12000)
    # 5500 more answers of 2 KB each would be 11 MB more if they were held at once.
    assert large - small < 2_000_000, (small, large)
    assert Answer.objects.count() == 18500
