"""Dataset diffs: the four partitions, and a run that does not cover the version."""

import json
from typing import Any

import pytest

from annotation.selectors.datasets import version_diff_detail
from annotation.services.datasets import questions_import
from calibration.selectors.grades import run_grades
from comparisons.selectors.diff import _right_by_partition, modified_fields
from evalapp.errors import ServiceError
from evalapp.jsonl import loads_exact
from tests.comparisons.support import (
    import_questions,
    import_run,
    q,
    run_command,
)
from tests.conftest import QUESTIONS, question, run_cmd, write_jsonl
from tests.factories import AnswerFactory, DatasetFactory, RunFactory, record, version

pytestmark = pytest.mark.django_db


def test_diff_datasets_with_a_run_that_does_not_cover_the_version_exits_2(tmp_path):
    v1 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001")], "v1")
    v2 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001"), q("q-0002")], "v2")
    import_run(
        tmp_path,
        run_id="old",
        system="s",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={"q-0000": True, "q-0001": False},
    )
    import_run(
        tmp_path,
        run_id="new",
        system="s",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct={"q-0000": True, "q-0001": None, "q-0002": True},
    )  # q-0001 not scored yet
    out = run_command(
        "diff_datasets",
        "--dataset",
        "support",
        v1["dataset_hash"],
        v2["dataset_hash"],
        "--run-old",
        "old",
        "--run-new",
        "new",
        expect=2,
    )
    assert out["error"] == (
        "cannot decompose the movement: run new must score exactly the qids of version 2: "
        "unscored ['q-0001'], not in the version []"
    )


@pytest.mark.django_db
def test_diff_datasets_lists_the_four_partitions(tmp_path, questions_file):
    v1 = questions_import(path=questions_file, dataset_name="support")
    v2 = questions_import(
        path=write_jsonl(tmp_path / "v2.jsonl", [dict(QUESTIONS[0], expected="x"), QUESTIONS[1], question("q-0010")]),
        dataset_name="support",
    )
    code, out, _ = run_cmd("diff_datasets", "--dataset", "support", v1.dataset_hash, v2.dataset_hash, "--json")
    assert code == 0
    payload = json.loads(out)
    assert {k: payload[k] for k in ("added", "removed", "modified", "unchanged")} == {
        "added": ["q-0010"],
        "removed": ["q-0003"],
        "modified": ["q-0001"],
        "unchanged": ["q-0002"],
    }
    code, _, err = run_cmd("diff_datasets", "--dataset", "support", v1.dataset_hash, "sha256:deadbeef")
    assert code == 2 and "unknown version" in err


def _relabelled_with_band(tmp_path):
    """100 questions, 10 relabelled in v2 (q-0000..q-0009). rag-v2 on v1: 70 right (all 10 relabelled and
    60 of the 90 unchanged), repeats at 69 and 71: band 70 ± 2 sd = 4.0 points wide."""
    ids = [f"q-{i:04d}" for i in range(100)]
    v1 = import_questions(tmp_path, "support", [q(i) for i in ids], "v1")
    v2 = import_questions(
        tmp_path, "support", [q(i, expected=f"corrected {i}") if n < 10 else q(i) for n, i in enumerate(ids)], "v2"
    )
    for run_id, right, at in (("old", 70, "2026-06-07T02:00:00Z"), ("old-r1", 69, "2026-06-07T03:00:00Z")):
        import_run(
            tmp_path,
            run_id=run_id,
            system="rag-v2",
            dataset="support",
            dataset_hash=v1["dataset_hash"],
            correct={i: n < right for n, i in enumerate(ids)},
            started_at=at,
        )
    import_run(
        tmp_path,
        run_id="old-r2",
        system="rag-v2",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={i: n < 71 for n, i in enumerate(ids)},
        started_at="2026-06-07T04:00:00Z",
    )
    return ids, v1, v2


def _diff(v1, v2, new_run):
    return run_command(
        "diff_datasets",
        "--dataset",
        "support",
        v1["dataset_hash"],
        v2["dataset_hash"],
        "--run-old",
        "old",
        "--run-new",
        new_run,
    )


def test_intersection_rescore_in_words_flat_and_explained_by_the_relabelled_batch(tmp_path):
    ids, v1, v2 = _relabelled_with_band(tmp_path)
    # Same pins; the 10 relabelled now wrong, the 90 unchanged answered as before (60 right).
    import_run(
        tmp_path,
        run_id="new",
        system="rag-v2",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct={i: 10 <= n < 70 for n, i in enumerate(ids)},
        started_at="2026-06-08T02:00:00Z",
    )
    r = _diff(v1, v2, "new")["movement"]["reading"]
    assert (r["band"]["runs"], r["band"]["width_points"]) == (["old", "old-r1", "old-r2"], 4.0)
    assert (r["intersection_points"], r["intersection_beyond_band"]) == (0.0, False)
    assert (r["dataset_points"], r["unexplained_points"], r["explained_within_band"]) == (-10.0, 0.0, True)
    assert r["differs"] == []
    assert r["words"] == (
        "On the 90 unchanged questions the score held within the 4.0-point run-to-run band "
        "(0.667 → 0.667, +0.0 points). The dataset's changes (modified -10.0, added +0.0, removed +0.0 points) "
        "account for the -10.0-point movement within the band."
    )


def test_intersection_rescore_in_words_names_what_moved_outside_the_dataset(tmp_path):
    ids, v1, v2 = _relabelled_with_band(tmp_path)
    # Another prompt: 9 more of the 90 unchanged right (69), the 10 relabelled wrong.
    import_run(
        tmp_path,
        run_id="new",
        system="rag-v2",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct={i: 10 <= n < 79 for n, i in enumerate(ids)},
        started_at="2026-06-08T02:00:00Z",
        prompt_hash="p2",
    )
    r = _diff(v1, v2, "new")["movement"]["reading"]
    assert (r["intersection_points"], r["intersection_beyond_band"]) == (10.0, True)
    assert (r["dataset_points"], r["unexplained_points"], r["explained_within_band"]) == (-10.0, 9.0, False)
    assert r["differs"] == ["prompt_hash"]
    assert r["words"] == (
        "On the 90 unchanged questions the score moved beyond the 4.0-point run-to-run band "
        "(0.667 → 0.767, +10.0 points). The dataset's changes (modified -10.0, added +0.0, removed +0.0 points) "
        "do not account for the -1.0-point movement: +9.0 points come from outside the dataset; "
        "the runs differ in prompt_hash (p1 → p2)."
    )


def test_intersection_rescore_in_words_without_a_band(tmp_path):
    ids = [f"q-{i:04d}" for i in range(4)]
    v1 = import_questions(tmp_path, "support", [q(i) for i in ids], "v1")
    v2 = import_questions(tmp_path, "support", [q(i) for i in ids] + [q("q-0004")], "v2")
    import_run(
        tmp_path,
        run_id="old",
        system="s",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct=dict.fromkeys(ids, True),
    )
    import_run(
        tmp_path,
        run_id="new",
        system="s",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct={**dict.fromkeys(ids, True), "q-0004": False},
        started_at="2026-06-08T02:00:00Z",
    )
    r = _diff(v1, v2, "new")["movement"]["reading"]
    assert (r["band"], r["intersection_beyond_band"], r["explained_within_band"]) == (None, None, None)
    assert r["words"] == (
        "On the 4 unchanged questions the score went 1.000 → 1.000 (+0.0 points); no run-to-run band is "
        "measured (import two or more repeat runs of an unchanged system), so rerun noise is not ruled out. "
        "The dataset's changes (modified +0.0, added -20.0, removed +0.0 points) give -20.0 of the "
        "-20.0-point movement; +0.0 points come from outside the dataset."
    )


def test_diff_datasets_narrows_modified_field_by_field(tmp_path, api_client_for):
    base = [q(f"q-{i:04d}", labelled_by="a.lee") for i in range(6)]
    v1 = import_questions(tmp_path, "support", base, "v1")
    changes = {
        "q-0000": {"expected": "a corrected answer"},
        "q-0001": {"gold_chunk_id": "doc:A#0099"},
        "q-0002": {"gold_doc_id": "doc:B", "gold_text": "moved passage"},
        "q-0003": {"grading": "span"},
        "q-0004": {"labelled_by": "j.okafor", "source": "review"},
    }
    v2 = import_questions(tmp_path, "support", [dict(r, **changes.get(r["qid"], {})) for r in base], "v2")
    out = run_command("diff_datasets", "--dataset", "support", v1["dataset_hash"], v2["dataset_hash"])
    assert out["modified"] == ["q-0000", "q-0001", "q-0002", "q-0003", "q-0004"]
    assert out["modified_fields"] == {
        "q-0000": ["expected"],
        "q-0001": ["gold_chunk_id"],
        "q-0002": ["gold_doc_id", "gold_text"],
        "q-0003": ["grading"],
        "q-0004": ["labelled_by", "source"],
    }
    assert out["modified_by"] == {
        "expected": ["q-0000"],
        "gold_chunk_id": ["q-0001"],
        "gold_doc_id": ["q-0002"],
        "gold_text": ["q-0002"],
        "grading": ["q-0003"],
        "question": [],
        "stratum": [],
        "metadata_only": ["q-0004"],
    }
    code, text, _ = run_cmd("diff_datasets", "--dataset", "support", "1", "2")
    assert code == 0
    assert (
        "  modified by field: expected 1, gold_chunk_id 1, gold_doc_id 1, gold_text 1, grading 1, metadata_only 1\n"
        in text + "\n"
    )
    api = api_client_for("eng", "engineer")
    res = api.get("/api/datasets/support/diff/", {"old": "1", "new": "2"})
    assert res.status_code == 200
    assert (res.json()["modified_fields"], res.json()["modified_by"]) == (out["modified_fields"], out["modified_by"])

    from comparisons.selectors.history import dataset_history

    history = dataset_history("support")["versions"][1]
    assert history["modified_words"] == (
        "expected 1 · gold chunk id 1 · gold doc id 1 · gold text 1 · grading 1 · metadata only 1"
    )
    assert history["modified_by"] == {
        "expected": 1,
        "gold_chunk_id": 1,
        "gold_doc_id": 1,
        "gold_text": 1,
        "grading": 1,
        "question": 0,
        "stratum": 0,
        "metadata_only": 1,
    }


def test_modified_fields_read_by_example_hash_equal_those_read_through_the_lines():
    support = DatasetFactory.create(name="hashes")
    base = [record(f"q-{i}") for i in range(6)]
    v1 = version(support, base)
    changed = [dict(base[0], expected="x"), dict(base[1], stratum="procedural"), dict(base[2], note="meta"), *base[3:]]
    v2 = version(support, changed, parent=v1)
    diff, pairs = version_diff_detail(v1, v2)
    by_lookup = modified_fields(v1, v2, diff.modified)
    assert diff.modified == ("q-0", "q-1", "q-2")
    if pairs is not None:  # PostgreSQL's joined partition carries the hashes
        assert set(pairs) == {"q-0", "q-1", "q-2"}
        assert modified_fields(v1, v2, diff.modified, example_pairs=pairs) == by_lookup
    assert by_lookup[0] == {"q-0": ["expected"], "q-1": ["stratum"], "q-2": ["note"]}
    assert by_lookup[1]["metadata_only"] == ["q-2"]


def test_modified_fields_name_an_integer_beyond_64_bits_that_changed():
    support = DatasetFactory.create(name="wide")
    base = [record("q-0", count=2**70), record("q-1", count=2**70, note="a")]
    v1 = version(support, base)
    v2 = version(support, [dict(base[0], count=2**70 + 1), dict(base[1], note="b")], parent=v1)
    diff, pairs = version_diff_detail(v1, v2)
    fields, by = modified_fields(v1, v2, diff.modified, example_pairs=pairs)
    assert fields == {"q-0": ["count"], "q-1": ["note"]}
    assert by["metadata_only"] == ["q-0", "q-1"]


# (old record's fields, new record's fields) beside the qid: values JSON and Python read alike, and those
# where Python's `!=` and the JSON text disagree (1 == 1.0 == True, -0.0 == 0.0, NaN != NaN, 10**23 != 1e23).
_EDGE_CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "q-str": ({"expected": "a"}, {"expected": "b"}),
    "q-int-float": ({"count": 1, "note": "a"}, {"count": 1.0, "note": "b"}),
    "q-bool-int": ({"flag": True, "zero": False, "note": "a"}, {"flag": 1, "zero": 0.0, "note": "b"}),
    "q-signed-zero": ({"x": -0.0, "note": "a"}, {"x": 0.0, "note": "b"}),
    "q-nested": ({"m": {"a": [1, 2]}, "note": "a"}, {"m": {"a": [1.0, 2]}, "note": "b"}),
    "q-list": ({"tags": ["a"]}, {"tags": ["b"]}),
    "q-nan": ({"n": float("nan"), "note": "a"}, {"n": float("nan"), "note": "b"}),
    "q-nan-word": ({"note": "NaN"}, {"note": "Infinity"}),
    "q-escapes": ({'a"b': "line\nbreak", "c\\d": "tab\tx"}, {'a"b': "line\nbreak!", "c\\d": "tab\tx"}),
    "q-nul": ({"note": "a\x00b"}, {"note": "a\x00c"}),
    "q-keys": ({"gone": 1, "nulled": None}, {"nulled": "x", "new": None}),
    "q-order": ({"é": "1", "z": "a", "Z": "a", "a": True}, {"é": "2", "z": "b", "Z": "b", "a": False}),
    "q-kinds": ({"s": "1", "e": "", "l": [], "o": {}}, {"s": 1, "e": None, "l": {}, "o": []}),
    "q-big": ({"big": 10**23, "huge": 2**70}, {"big": 1e23, "huge": 2**70 + 1}),
    "q-stratum": ({"stratum": "policy_lookup"}, {"stratum": "procedural"}),
}


def _edge_versions():
    support = DatasetFactory.create(name="edges")
    olds = [record(qid, **old) for qid, (old, _) in sorted(_EDGE_CHANGES.items())]
    news = [dict(r, **_EDGE_CHANGES[r["qid"]][1]) for r in olds]
    for r in news:
        for key in set(_EDGE_CHANGES[r["qid"]][0]) - set(_EDGE_CHANGES[r["qid"]][1]):
            del r[key]
    v1 = version(support, olds)
    return v1, version(support, news, parent=v1)


def test_modified_fields_of_values_python_and_the_json_text_disagree_on():
    v1, v2 = _edge_versions()
    diff, pairs = version_diff_detail(v1, v2)
    assert diff.modified == tuple(sorted(_EDGE_CHANGES))
    expected = {
        "q-big": ["big", "huge"],
        "q-bool-int": ["note"],
        "q-escapes": ['a"b'],
        "q-int-float": ["note"],
        "q-keys": ["gone", "new", "nulled"],
        "q-kinds": ["e", "l", "o", "s"],
        "q-list": ["tags"],
        "q-nan": ["n", "note"],
        "q-nan-word": ["note"],
        "q-nested": ["note"],
        "q-nul": ["note"],
        "q-order": ["Z", "a", "z", "é"],
        "q-signed-zero": ["note"],
        "q-str": ["expected"],
        "q-stratum": ["stratum"],
    }
    by_lines = modified_fields(v1, v2, diff.modified)
    assert by_lines[0] == expected
    if pairs is not None:  # PostgreSQL: the records read by their example hashes
        assert modified_fields(v1, v2, diff.modified, example_pairs=pairs) == by_lines
    assert by_lines[1]["stratum"] == ["q-stratum"]
    assert by_lines[1]["expected"] == ["q-str"]
    assert by_lines[1]["metadata_only"] == sorted(set(_EDGE_CHANGES) - {"q-stratum", "q-str"})


def test_modified_fields_of_changed_strings_read_no_record_twice(django_assert_num_queries):
    """Changed text fields only (the usual relabelling): one statement, whatever the number of records."""
    support = DatasetFactory.create(name="texts")
    base = [record(f"q-{i:03d}", expected=f"answer {i}", note="n") for i in range(40)]
    v1 = version(support, base)
    changed = [dict(r, expected="relabelled") if i % 3 == 0 else r for i, r in enumerate(base)]
    v2 = version(support, [dict(r, note="m") if i % 5 == 0 else r for i, r in enumerate(changed)], parent=v1)
    diff, pairs = version_diff_detail(v1, v2)
    with django_assert_num_queries(1):
        fields, by = modified_fields(v1, v2, diff.modified, example_pairs=pairs)
    assert fields == {
        f"q-{i:03d}": [k for k, hit in (("expected", i % 3 == 0), ("note", i % 5 == 0)) if hit]
        for i in range(40)
        if i % 3 == 0 or i % 5 == 0
    }
    assert by["expected"] == [f"q-{i:03d}" for i in range(0, 40, 3)]
    assert by["metadata_only"] == [f"q-{i:03d}" for i in range(40) if i % 5 == 0 and i % 3]


def _graded_world():
    """v1 q-0..q-9, v2: q-0..q-2 relabelled, q-9 removed, q-10 and q-11 added; `old` answers v1 (right on
    even qids), `new` answers v2 (right on odd ones)."""
    support = DatasetFactory.create(name="sums")
    base = [record(f"q-{i}") for i in range(10)]
    v1 = version(support, base)
    grown = [dict(r, expected="x") if i < 3 else r for i, r in enumerate(base[:9])] + [
        record("q-10"),
        record("q-11"),
    ]
    v2 = version(support, grown, parent=v1)
    runs = {}
    for run_id, v, records, parity in (("old", v1, base, 0), ("new", v2, grown, 1)):
        runs[run_id] = RunFactory.create(run_id=run_id, dataset=support, dataset_version=v)
        for r in records:
            AnswerFactory.create(run=runs[run_id], qid=r["qid"], correct=int(r["qid"][2:]) % 2 == parity)
    return v1, v2, runs


def test_right_by_partition_equals_the_qid_by_qid_tally():
    v1, v2, runs = _graded_world()
    diff, _ = version_diff_detail(v1, v2)
    for run, v, partitions in (
        (runs["old"], v1, ("unchanged", "modified", "removed")),
        (runs["new"], v2, ("unchanged", "modified", "added")),
    ):
        grades = run_grades(run, version=v)
        assert _right_by_partition(grades, diff, partitions, run, v) == {
            p: grades.tally(getattr(diff, p))[0] for p in partitions
        }
    assert _right_by_partition(
        run_grades(runs["old"], version=v1), diff, ("unchanged", "modified", "removed"), runs["old"], v1
    ) == {
        "unchanged": 3,  # q-4, q-6, q-8
        "modified": 2,  # q-0, q-2
        "removed": 0,  # q-9
    }


def test_right_by_partition_refuses_a_run_scoring_a_qid_beyond_the_version():
    v1, v2, runs = _graded_world()
    AnswerFactory.create(run=runs["old"], qid="q-99", correct=True)
    diff, _ = version_diff_detail(v1, v2)
    with pytest.raises(ServiceError) as caught:
        _right_by_partition(
            run_grades(runs["old"], version=v1), diff, ("unchanged", "modified", "removed"), runs["old"], v1
        )
    assert caught.value.message == (
        "cannot decompose the movement: run old must score exactly the qids of version 1: "
        "unscored [], not in the version ['q-99']"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"n":1180591620717411303424}',  # 2**70: an integer, never a float
        '{"n":-9223372036854775809,"m":18446744073709551615}',
        '{"x":0.1,"y":2.2250738585072011e-308,"z":4.9e-324,"w":1.7976931348623157e308,"v":1e22,"u":-0.0}',
        '{"s":"caf\\u00e9 \\ud83d\\ude00","t":[1,2.5,true,null,{"a":[]}]}',
    ],
)
def test_a_record_parsed_for_the_diff_is_what_json_reads(text):
    found, expected = loads_exact(text), json.loads(text)
    assert found == expected
    assert repr(found) == repr(expected)  # the same types too (an int stays an int)
