"""Failure attribution by fields and stratum."""

import pytest

from tests.comparisons.support import (
    build_rechunk,
    import_questions,
    import_run,
    q,
    run_command,
)

pytestmark = pytest.mark.django_db


def test_failure_attribution_by_fields_and_stratum(tmp_path):
    v = import_questions(
        tmp_path,
        "support",
        [
            q("q-0000"),
            q("q-0001"),
            q("q-0002"),
            q("q-0003"),
            q("q-0004", stratum="no_answer", gold_doc_id=None, gold_chunk_id=None),
            q("q-0005", stratum="how_to"),
            q("q-0006", stratum="how_to"),
        ],
        "v1",
    )
    gold = {f"q-000{i}": f"doc:A#{i:04d}" for i in range(7)}
    rows = {
        "q-0001": {"retrieved": [{"chunk_id": "doc:B#0001", "rank": 1}], "prompt_chunks": ["doc:B#0001"]},
        "q-0002": {
            "retrieved": [{"chunk_id": "doc:B#0001", "rank": 1}, {"chunk_id": gold["q-0002"], "rank": 3}],
            "prompt_chunks": ["doc:B#0001"],
        },
        "q-0003": {"retrieved": [{"chunk_id": gold["q-0003"], "rank": 1}], "prompt_chunks": [gold["q-0003"]]},
        "q-0005": {"retrieved": [{"chunk_id": gold["q-0005"], "rank": 7}], "prompt_chunks": []},
        "q-0006": {"retrieved": [{"chunk_id": gold["q-0006"], "rank": 2}], "prompt_chunks": [gold["q-0006"]]},
    }
    import_run(
        tmp_path,
        run_id="A",
        system="s",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        rows=rows,
        correct={
            "q-0000": True,
            "q-0001": False,
            "q-0002": False,
            "q-0003": False,
            "q-0004": False,
            "q-0005": False,
            "q-0006": True,
        },
    )
    out = run_command("failures", "A")
    assert (out["answered"], out["scored"], out["failing"]) == (7, 7, 5)
    assert out["counts"] == {"not_retrieved": 1, "retrieved_not_in_prompt": 2, "generation": 1, "no_gold": 1}
    assert out["ranks_not_in_prompt"] == {"3": 1, "7": 1}
    assert out["per_stratum"] == {
        "how_to": {
            "scored": 2,
            "failing": 1,
            "counts": {"not_retrieved": 0, "retrieved_not_in_prompt": 1, "generation": 0, "no_gold": 0},
        },
        "no_answer": {
            "scored": 1,
            "failing": 1,
            "counts": {"not_retrieved": 0, "retrieved_not_in_prompt": 0, "generation": 0, "no_gold": 1},
        },
        "policy_lookup": {
            "scored": 4,
            "failing": 3,
            "counts": {"not_retrieved": 1, "retrieved_not_in_prompt": 1, "generation": 1, "no_gold": 0},
        },
    }
    assert [(f["qid"], f["category"], f["rank"]) for f in out["failures"]] == [
        ("q-0001", "not_retrieved", None),
        ("q-0002", "retrieved_not_in_prompt", 3),
        ("q-0003", "generation", 1),
        ("q-0004", "no_gold", None),
        ("q-0005", "retrieved_not_in_prompt", 7),
    ]
    only = run_command("failures", "A", "--stratum", "how_to")
    assert [f["qid"] for f in only["failures"]] == ["q-0005"]
    assert run_command("failures", "nope", expect=2)["error"] == "unknown run 'nope'"


def test_failure_attribution_after_a_rechunk_falls_back_to_gold_document_and_text(tmp_path):
    build_rechunk(tmp_path)
    out = run_command("failures", "A")
    assert [(f["qid"], f["category"], f["rank"], f["matched_by"]) for f in out["failures"]] == [
        ("q-0000", "generation", 1, "gold_text"),  # the trials text, in its new chunk
        ("q-0001", "not_retrieved", None, None),  # #0002 no longer holds the refunds text
        ("q-0002", "retrieved_not_in_prompt", 2, "chunk_id"),
        ("q-0003", "generation", 4, "gold_document"),
    ]
    assert out["counts"] == {"not_retrieved": 1, "retrieved_not_in_prompt": 1, "generation": 2, "no_gold": 0}
