"""Builders for the comparison tests: question sets and runs written as JSONL and loaded through the
real commands (import_questions, import_run, import_labels). No tests of its own."""

import io
import json
from pathlib import Path

from django.core.management import call_command

from annotation.services.criteria import criterion_set

PINNED = {
    "model_snapshot": "gpt-x-2026-05-01",
    "prompt_hash": "p1",
    "evaluator_version": "ev-1",
    "evaluator_config_hash": "sha256:cfg1",
    "harness_commit": "abc123",
    "index_id": "prod-index@2026-06-02",
}


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def run_command(name: str, *args, expect: int = 0) -> dict:
    """Run a management command with --json; return its JSON object; assert the exit code."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        call_command(name, *args, "--json", stdout=out, stderr=err)
    except SystemExit as exc:
        code = exc.code
    assert code == expect, f"{name} exited {code}: {err.getvalue()}"
    text = out.getvalue().strip()
    return json.loads(text) if text else {}


def q(qid: str, stratum: str = "policy_lookup", **fields) -> dict:
    record = {
        "qid": qid,
        "question": f"question {qid}",
        "stratum": stratum,
        "gold_doc_id": "doc:A",
        "gold_chunk_id": f"doc:A#{int(qid.split('-')[1]) % 10000:04d}",
        "expected": f"answer {qid}",
        "grading": "rubric",
    }
    record.update(fields)
    return record


def qids(n: int, start: int = 0) -> list[str]:
    return [f"q-{i:04d}" for i in range(start, start + n)]


def import_questions(tmp_path: Path, dataset: str, records: list[dict], tag: str) -> dict:
    path = write_jsonl(tmp_path / f"questions-{dataset}-{tag}.jsonl", records)
    return run_command("import_questions", str(path), "--dataset", dataset)


def import_run(
    tmp_path: Path,
    *,
    run_id: str,
    system: str,
    dataset: str,
    dataset_hash: str,
    correct: dict,
    started_at: str = "2026-06-07T02:00:00Z",
    answers: dict | None = None,
    rows: dict | None = None,
    **pinned,
) -> dict:
    """A run answering every qid of `correct` (qid -> True/False/None), correct=None leaves it unscored."""
    header = {
        "run_id": run_id,
        "system": system,
        "dataset": dataset,
        "dataset_hash": dataset_hash,
        "started_at": started_at,
        **PINNED,
        **pinned,
    }
    lines = [header]
    for qid, ok in correct.items():
        line = {"qid": qid, "answer": (answers or {}).get(qid, f"answer of {system} to {qid}")}
        if ok is not None:
            line["correct"] = ok
        line.update((rows or {}).get(qid, {}))
        lines.append(line)
    path = write_jsonl(tmp_path / f"run-{run_id}.jsonl", lines)
    return run_command("import_run", str(path))


def build_series(tmp_path: Path) -> dict:
    """`support` in three versions and five runs of rag-v2 graded by the span rule (no harness score):
    v1 (10 questions) -> v2 (q-0001 relabelled) -> v3 (two added); the evaluator config changes at r5.
    Breaks: r2|r3 (dataset v1 -> v2), r3|r4 (v2 -> v3), r4|r5 (evaluator config)."""
    base = [q(i, grading="span", expected=f"fact {i}") for i in qids(10)]
    v1 = import_questions(tmp_path, "support", base, "s1")
    relabel = [dict(r, expected="fact corrected") if r["qid"] == "q-0001" else r for r in base]
    v2 = import_questions(tmp_path, "support", relabel, "s2")
    grown = relabel + [q(i, grading="span", expected=f"fact {i}") for i in qids(2, start=10)]
    v3 = import_questions(tmp_path, "support", grown, "s3")

    def answers(ids, right):
        # Right answers contain the expected fact; q-0001 answered "fact corrected" (right only under v2+).
        out = {}
        for n, i in enumerate(ids):
            out[i] = ("It is fact corrected." if i == "q-0001" else f"It is fact {i}.") if n < right else "No idea."
        return out

    ids10, ids12 = qids(10), qids(12)
    specs = [
        ("r1", v1, ids10, 6, "2026-06-01T02:00:00Z", {}),
        ("r2", v1, ids10, 7, "2026-06-02T02:00:00Z", {}),
        ("r3", v2, ids10, 8, "2026-06-03T02:00:00Z", {}),
        ("r4", v3, ids12, 9, "2026-06-04T02:00:00Z", {}),
        ("r5", v3, ids12, 10, "2026-06-05T02:00:00Z", {"evaluator_config_hash": "sha256:cfg2"}),
    ]
    for run_id, v, ids, right, at, extra in specs:
        import_run(
            tmp_path,
            run_id=run_id,
            system="rag-v2",
            dataset="support",
            dataset_hash=v["dataset_hash"],
            correct=dict.fromkeys(ids),
            answers=answers(ids, right),
            started_at=at,
            **extra,
        )
    return {"v1": v1, "v2": v2, "v3": v3}


def build_judge_series(tmp_path: Path, *, calibrate: bool):
    """run-a on v1 of `support` (12 judge-graded questions, two agreeing human labels each), optionally a
    span judge whose gate passes (threshold 0.0); then v2 (q-0003's expected changed, q-0004 only moved
    stratum) and run-b on v2, so run-a is backfilled onto v2."""
    from calibration.services.calibration import calibration_run_here, calibration_start
    from calibration.services.judges import judge_version_create
    from tests.calibration.world import load_world

    files = load_world(tmp_path / "world", n=12)
    judge = None
    if calibrate:
        judge = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.0)[0]
        run, _ = calibration_start(judge_version_id=judge.pk, dataset_name="support", size=12, dispatch=False)
        calibration_run_here(run_id=run.pk)
    records = [json.loads(line) for line in files["questions"].read_text().splitlines()]
    for r in records:
        if r["qid"] == "q-0003":
            r["expected"] = "code 9999"
        if r["qid"] == "q-0004":
            r["stratum"] = "howto"
    v2 = import_questions(tmp_path, "support", records, "judge-v2")
    import_run(
        tmp_path,
        run_id="run-b",
        system="rag-v2",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct=dict.fromkeys(r["qid"] for r in records),
        started_at="2026-06-09T02:00:00Z",
        evaluator_config_hash="",  # as run-a's: the same evaluator, so run-a is backfilled
    )
    return judge


def build_300(tmp_path, *, repeats: bool = True):
    """300 questions; A right on 213 (0.71), B right on 237 (0.79): 38 only B, 14 only A."""
    ids = qids(300)
    v = import_questions(
        tmp_path, "support", [q(i, stratum="policy_lookup" if n < 200 else "how_to") for n, i in enumerate(ids)], "v1"
    )
    # order: 199 both right, 38 only B, 14 only A, 49 both wrong; spread over the strata by a stride.
    order = [ids[(n * 7) % 300] for n in range(300)]
    both, b_only, a_only = order[:199], order[199:237], order[237:251]
    a = {i: (i in both or i in a_only) for i in ids}
    b = {i: (i in both or i in b_only) for i in ids}
    import_run(tmp_path, run_id="A", system="rag-v1", dataset="support", dataset_hash=v["dataset_hash"], correct=a)
    import_run(
        tmp_path,
        run_id="B",
        system="rag-v2",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct=b,
        started_at="2026-06-08T02:00:00Z",
        prompt_hash="p2",
    )
    if repeats:
        # Two reruns of A's unchanged system (same pinned inputs): 0.70 and 0.72 -> band mean 0.71, sd 0.01.
        for run_id, right in (("A-rerun-1", 210), ("A-rerun-2", 216)):
            import_run(
                tmp_path,
                run_id=run_id,
                system="rag-v1",
                dataset="support",
                dataset_hash=v["dataset_hash"],
                correct={i: n < right for n, i in enumerate(ids)},
                started_at="2026-06-07T03:00:00Z",
            )
    return v, sorted(a_only)


def build_stratum_regression(tmp_path):
    """300 questions, 30 of them no_answer: overall A 0.71, B 0.79 (38 only B, 14 only A), but in
    no_answer A is right on all 30 and B on 20 (10 only A): -33.3 points there."""
    ids = qids(300)
    v = import_questions(
        tmp_path,
        "support",
        [q(i, stratum="no_answer" if n >= 270 else "policy_lookup") for n, i in enumerate(ids)],
        "v1",
    )
    rest, no_answer = ids[:270], ids[270:]
    both = rest[:179] + no_answer[:20]
    b_only, a_only = rest[179:217], rest[217:221] + no_answer[20:]
    a = {i: (i in both or i in a_only) for i in ids}
    b = {i: (i in both or i in b_only) for i in ids}
    common = {"dataset": "support", "dataset_hash": v["dataset_hash"]}
    import_run(tmp_path, run_id="A", system="rag-v1", correct=a, **common)
    import_run(tmp_path, run_id="B", system="rag-v2", correct=b, started_at="2026-06-08T02:00:00Z", **common)
    for run_id, right in (("A-rerun-1", 210), ("A-rerun-2", 216)):
        import_run(
            tmp_path,
            run_id=run_id,
            system="rag-v1",
            correct={i: n < right for n, i in enumerate(ids)},
            started_at="2026-06-07T03:00:00Z",
            **common,
        )
    return v


def build_rechunk(tmp_path: Path) -> dict:
    """Corpus doc:P re-chunked after the gold was tagged (a paragraph inserted: #0001 now holds "New
    notice.", the trials text moved to #0002, the refunds text to #0003), and run A's four failing answers
    retrieved against the new chunks: q-0000 the trials text in the prompt, q-0001 #0002 (no longer the
    refunds text), q-0002 the unchanged #0000 at rank 2, q-0003 (gold document only) #0003 in the prompt."""

    def corpus(tag, paragraphs):
        doc = {"doc_id": "doc:P", "title": "Plans", "text": "\n\n".join(paragraphs), "source": "confluence"}
        return str(write_jsonl(tmp_path / f"corpus-{tag}.jsonl", [doc]))

    run_command("import_corpus", corpus("1", ["Alpha intro.", "Trials run thirty days.", "Refunds take a week."]))
    gold = {"gold_doc_id": "doc:P"}
    v = import_questions(
        tmp_path,
        "support",
        [
            q("q-0000", gold_chunk_id="doc:P#0001", gold_text="Trials run thirty days.", **gold),
            q("q-0001", gold_chunk_id="doc:P#0002", gold_text="Refunds take a week.", **gold),
            q("q-0002", gold_chunk_id="doc:P#0000", gold_text="Alpha intro.", **gold),
            q("q-0003", gold_chunk_id="doc:P#0009", **gold),  # no gold_text; its document holds no #0009
        ],
        "v1",
    )
    # Re-chunked: a paragraph inserted, so #0001 now holds "New notice." and the trials text is #0002.
    out = run_command(
        "import_corpus",
        corpus("2", ["Alpha intro.", "New notice.", "Trials run thirty days.", "Refunds take a week."]),
    )
    assert (out["chunks"], out["retired"]) == (3, 2), out  # #0000 kept, #0001 and #0002 retired
    rows = {
        "q-0000": {"retrieved": [{"chunk_id": "doc:P#0002", "rank": 1}], "prompt_chunks": ["doc:P#0002"]},
        "q-0001": {"retrieved": [{"chunk_id": "doc:P#0002", "rank": 1}], "prompt_chunks": []},
        "q-0002": {"retrieved": [{"chunk_id": "doc:P#0000", "rank": 2}], "prompt_chunks": []},
        "q-0003": {"retrieved": [{"chunk_id": "doc:P#0003", "rank": 4}], "prompt_chunks": ["doc:P#0003"]},
    }
    import_run(
        tmp_path,
        run_id="A",
        system="s",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        rows=rows,
        correct=dict.fromkeys(rows, False),
    )
    return v


def criterion_values_file(tmp_path, rows):
    """Criterion lines: (run, qid, annotator, criterion, value)."""
    lines = [
        {"run_id": run, "qid": qid, "annotator": who, "criterion": name, "value": value}
        for run, qid, who, name, value in rows
    ]
    return str(write_jsonl(tmp_path / f"values-{len(lines)}.jsonl", lines))


def build_rated_criteria(tmp_path):
    """build_300's runs A and B, faithfulness (1-5, pass >= 4) and tone (poor/fair/good) values on the
    first 40 questions: A's faithfulness cycles 2,3,4,5; B's is A's + 1 (capped at 5) except on every
    fifth question, where it is A's - 1. On q-0000 B's two annotators disagree (disputed: left out)."""
    build_300(tmp_path, repeats=False)
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"), pass_rule=">= 4")
    criterion_set(dataset_name="support", name="tone", kind="ordinal", values=["poor", "fair", "good"])
    criterion_set(dataset_name="support", name="topic", kind="categorical", values=["billing", "plans"])
    rows, a_scores, b_scores = [], {}, {}
    for n, qid in enumerate(qids(40)):
        a = 2 + n % 4
        b = a - 1 if n % 5 == 0 else min(a + 1, 5)
        a_scores[qid], b_scores[qid] = a, b
        rows += [("A", qid, "ann1", "faithfulness", str(a)), ("B", qid, "ann1", "faithfulness", str(b))]
        rows += [("A", qid, "ann1", "tone", "fair"), ("B", qid, "ann1", "tone", "good" if n < 10 else "fair")]
        rows += [("A", qid, "ann1", "topic", "plans"), ("B", qid, "ann1", "topic", "plans")]
    rows.append(("B", "q-0000", "ann2", "faithfulness", "5"))
    run_command("import_labels", criterion_values_file(tmp_path, rows))
    del a_scores["q-0000"], b_scores["q-0000"]
    return a_scores, b_scores


def build_published(tmp_path):
    """The published figures' world: 20 questions, run A right on the first 14 (0.70). Returns (qids, v1)."""
    ids = qids(20)
    v1 = import_questions(tmp_path, "support", [q(i) for i in ids], "v1")
    import_run(
        tmp_path,
        run_id="A",
        system="rag-v1",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={i: n < 14 for n, i in enumerate(ids)},
    )
    return ids, v1
