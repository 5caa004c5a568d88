"""Grading answers without a harness score by the question's rule, and failure attribution."""
import pytest

from tests.calibration.test_compare_support import (
    import_questions,
    import_run,
    q,
    run_command,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


def test_answers_without_harness_score_are_graded_by_rule_then_human_labels(tmp_path):
    v = import_questions(tmp_path, "support", [
        q("q-0000", grading="span", expected="30 days"),
        q("q-0001", grading="extraction", expected="2026-05-12"),
        q("q-0002", grading="rubric"),
        q("q-0003", grading="judge"),
        q("q-0004", grading="rubric"),
        q("q-0005", grading="span", expected=None, gold_text=None),   # the rule cannot grade: no reference
        q("q-0006", grading="span", expected="ninety days"),
    ], "v1")
    import_run(tmp_path, run_id="A", system="s", dataset="support", dataset_hash=v["dataset_hash"],
               correct={f"q-000{i}": None for i in range(7)} | {"q-0006": False},
               answers={"q-0000": "Thirty... no: 30 days.", "q-0001": "on 12 May 2026", "q-0002": "x",
                        "q-0003": "y", "q-0004": "z", "q-0005": "w", "q-0006": "ninety days"})
    labels = [{"run_id": "A", "qid": qid, "annotator": who, "verdict": verdict, "labelled_at": "2026-06-01T10:00:00Z"}
              for qid, verdict in (("q-0002", "incorrect"), ("q-0003", "correct")) for who in ("ann1", "ann2")]
    labels += [{"run_id": "A", "qid": "q-0004", "annotator": who, "verdict": verdict,
                "labelled_at": "2026-06-01T10:00:00Z"}
               for who, verdict in (("ann1", "correct"), ("ann2", "incorrect"))]  # disputed: no final label yet
    run_command("import_labels", str(write_jsonl(tmp_path / "labels.jsonl", labels)))

    from annotation.models import Run
    from calibration.selectors.grades import answer_grade, run_grades

    run = Run.objects.get(run_id="A")
    g = run_grades(run)
    # The harness's own score wins (q-0006 says false although the span rule would say right).
    assert g.scores == {"q-0000": True, "q-0001": True, "q-0002": False, "q-0003": True, "q-0006": False}
    assert g.sources == {"harness": 1, "span": 1, "extraction": 1, "human": 2}
    assert g.ungraded == {"awaiting human label": 1, "rule could not grade and no human label": 1}
    assert answer_grade(run, "q-0003") == (True, "human")   # judge rule, no gated judge: human final label
    assert answer_grade(run, "q-0004") == (None, None)


def test_failure_attribution_by_fields_and_stratum(tmp_path):
    v = import_questions(tmp_path, "support", [
        q("q-0000"), q("q-0001"), q("q-0002"), q("q-0003"),
        q("q-0004", stratum="no_answer", gold_doc_id=None, gold_chunk_id=None),
        q("q-0005", stratum="how_to"), q("q-0006", stratum="how_to"),
    ], "v1")
    gold = {f"q-000{i}": f"doc:A#{i:04d}" for i in range(7)}
    rows = {
        "q-0001": {"retrieved": [{"chunk_id": "doc:B#0001", "rank": 1}], "prompt_chunks": ["doc:B#0001"]},
        "q-0002": {"retrieved": [{"chunk_id": "doc:B#0001", "rank": 1}, {"chunk_id": gold["q-0002"], "rank": 3}],
                   "prompt_chunks": ["doc:B#0001"]},
        "q-0003": {"retrieved": [{"chunk_id": gold["q-0003"], "rank": 1}], "prompt_chunks": [gold["q-0003"]]},
        "q-0005": {"retrieved": [{"chunk_id": gold["q-0005"], "rank": 7}], "prompt_chunks": []},
        "q-0006": {"retrieved": [{"chunk_id": gold["q-0006"], "rank": 2}], "prompt_chunks": [gold["q-0006"]]},
    }
    import_run(tmp_path, run_id="A", system="s", dataset="support", dataset_hash=v["dataset_hash"], rows=rows,
               correct={"q-0000": True, "q-0001": False, "q-0002": False, "q-0003": False, "q-0004": False,
                        "q-0005": False, "q-0006": True})
    out = run_command("failures", "A")
    assert (out["answered"], out["scored"], out["failing"]) == (7, 7, 5)
    assert out["counts"] == {"not_retrieved": 1, "retrieved_not_in_prompt": 2, "generation": 1, "no_gold": 1}
    assert out["ranks_not_in_prompt"] == {"3": 1, "7": 1}
    assert out["per_stratum"] == {
        "how_to": {"scored": 2, "failing": 1, "counts": {"not_retrieved": 0, "retrieved_not_in_prompt": 1,
                                                          "generation": 0, "no_gold": 0}},
        "no_answer": {"scored": 1, "failing": 1, "counts": {"not_retrieved": 0, "retrieved_not_in_prompt": 0,
                                                             "generation": 0, "no_gold": 1}},
        "policy_lookup": {"scored": 4, "failing": 3, "counts": {"not_retrieved": 1, "retrieved_not_in_prompt": 1,
                                                                 "generation": 1, "no_gold": 0}},
    }
    assert [(f["qid"], f["category"], f["rank"]) for f in out["failures"]] == [
        ("q-0001", "not_retrieved", None), ("q-0002", "retrieved_not_in_prompt", 3), ("q-0003", "generation", 1),
        ("q-0004", "no_gold", None), ("q-0005", "retrieved_not_in_prompt", 7)]
    only = run_command("failures", "A", "--stratum", "how_to")
    assert [f["qid"] for f in only["failures"]] == ["q-0005"]
    assert run_command("failures", "nope", expect=2)["error"] == "unknown run 'nope'"


def test_diff_datasets_with_a_run_that_does_not_cover_the_version_exits_2(tmp_path):
    v1 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001")], "v1")
    v2 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001"), q("q-0002")], "v2")
    import_run(tmp_path, run_id="old", system="s", dataset="support", dataset_hash=v1["dataset_hash"],
               correct={"q-0000": True, "q-0001": False})
    import_run(tmp_path, run_id="new", system="s", dataset="support", dataset_hash=v2["dataset_hash"],
               correct={"q-0000": True, "q-0001": None, "q-0002": True})   # q-0001 not scored yet
    out = run_command("diff_datasets", "--dataset", "support", v1["dataset_hash"], v2["dataset_hash"],
                      "--run-old", "old", "--run-new", "new", expect=2)
    assert out["error"] == ("cannot decompose the movement: run new must score exactly the qids of version 2: "
                            "unscored ['q-0001'], not in the version []")


def test_compare_checks_stale_gold_first_and_reports_it(tmp_path, corpus_file):
    run_command("import_corpus", str(corpus_file))
    live = "Passwords rotate every ninety days."
    v = import_questions(tmp_path, "support", [
        q("q-0000", gold_doc_id="confluence:SEC/12", gold_chunk_id="confluence:SEC/12#0000", gold_text=live),
        q("q-0001", gold_doc_id="confluence:SEC/12", gold_chunk_id="confluence:SEC/12#0000",
          gold_text="Passwords never expire."),   # no longer in the corpus
        q("q-0002", gold_doc_id=None, gold_chunk_id=None, stratum="no_answer"),
    ], "v1")
    for run_id, right in (("A", {"q-0000": True, "q-0001": True, "q-0002": False}),
                          ("B", {"q-0000": True, "q-0001": False, "q-0002": True})):
        import_run(tmp_path, run_id=run_id, system=run_id, dataset="support", dataset_hash=v["dataset_hash"],
                   correct=right)
    out = run_command("compare", "A", "B", "--iters", "100")
    report = out["stale_gold"][v["dataset_hash"]]
    assert (report["checked"], report["stale"], report["stale_qids"], report["stale_in_paired"]) == (
        2, 1, ["q-0001"], 1)
    assert out["warnings"] == [f"1 gold label(s) of {v['dataset_hash'][:19]}… are stale (1 among the paired "
                               f"questions): their gold_text is no longer in the live corpus"]
    assert run_command("compare", "A", "B", "--iters", "100", "--no-stale-check")["stale_gold"] == {}
