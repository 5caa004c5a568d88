"""Build the demo data files from the Python standard library's own docstrings.

(One build script, run by hand and read top to bottom; it is past 400 lines because the chunking, the
runs and the checks it prints must agree with each other in one place.)

Not part of the installed package: run it by hand, from the project root, when the demo changes:

    .venv/bin/python tools/demo/make_demo.py [--out DIR]

(the committed files were made with CPython 3.11.7; another version gives other docstrings, and
the script then stops where a hand-written gold sentence is no longer found).
Its outputs are committed as package data, so the demo never depends on the Python version it is
loaded under (docstrings change between releases; chunk ids and gold sentences must not).

Reads `authored.jsonl` beside this script: the hand-written part, one question a line, with its gold
reference and the two systems' answers (see CODES). Writes into annotation/demo/:
  corpus.jsonl            one document per module: module doc, then each public function/class
  questions.jsonl         the `stdlib-support` labelled set
  run_baseline.jsonl      system rag-v1, run demo-rag-v1
  run_candidate.jsonl     system rag-v2, run demo-rag-v2
  labels.jsonl            two annotators' grades on both runs

A gold reference `gold` is [doc, sentence] or [doc, sentence, after]: `after` names the entry (the
start of a chunk, e.g. "dumps(") from which to look, for sentences a docstring repeats. Gold sentences
are written with their line breaks folded to single spaces; the script finds the exact text (line
breaks and all) in the chunk the project's chunker produces, and stops if a sentence is not found
exactly once. Chunk ids are computed with the project's own chunker exactly as import_corpus will.

Answers `v1` and `v2` are [code, gold_rank, text] per system. gold_rank is where the gold chunk came in
the retrieval (1 = top; null = not retrieved). The code fixes the harness score and the two annotators'
verdicts (CODES).
"""

import hashlib
import importlib
import inspect
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "annotation" / "demo"
sys.path.insert(0, str(ROOT))  # the project root, for annotation.chunker

from annotation.chunker import DEFAULT_MAX_CHARS, chunk_id, chunk_text  # noqa: E402

# code -> (harness score, ann1's verdict, ann2's verdict)
CODES = {
    "R": (True, "correct", "correct"),  # right
    "W": (False, "incorrect", "incorrect"),  # wrong
    "Rh": (False, "correct", "correct"),  # right, but the harness missed it (paraphrase)
    "Wh": (True, "incorrect", "incorrect"),  # wrong, but the harness passed it (keyword hit)
    "D1": (True, "correct", "incorrect"),  # borderline
    "D2": (False, "incorrect", "correct"),  # borderline
}
STRATA = {"single_fact": 40, "procedural": 20, "constrained": 15, "comparison": 10, "no_answer": 10, "ambiguous": 5}
# Who labelled each question: spread over a few experts and days.
LABELLERS = ("r.iyer", "t.nguyen", "m.alvarez")


def load_questions() -> list[dict]:
    """The hand-written questions, in file order."""
    with open(HERE / "authored.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


DATASET = "stdlib-support"
SOURCE = "python-stdlib"
DOC_CAP = 24_000  # characters per document; cut at an entry boundary
MEMBER_CAP = 3_000  # characters per function/class docstring
MAX_MEMBERS = 40  # public functions/classes per module
MAX_METHODS = 20  # public methods per class, those the class itself defines

# (module, title) — titles as the library reference names them.
MODULES = [
    ("json", "JSON encoder and decoder"),
    ("csv", "CSV file reading and writing"),
    ("datetime", "Basic date and time types"),
    ("pathlib", "Object-oriented filesystem paths"),
    ("itertools", "Functions creating iterators for efficient looping"),
    ("functools", "Higher-order functions and operations on callable objects"),
    ("collections", "Container datatypes"),
    ("re", "Regular expression operations"),
    ("os.path", "Common pathname manipulations"),
    ("shutil", "High-level file operations"),
    ("subprocess", "Subprocess management"),
    ("argparse", "Parser for command-line options, arguments and sub-commands"),
    ("logging", "Logging facility for Python"),
    ("statistics", "Mathematical statistics functions"),
    ("random", "Generate pseudo-random numbers"),
    ("textwrap", "Text wrapping and filling"),
    ("string", "Common string operations"),
    ("heapq", "Heap queue algorithm"),
    ("bisect", "Array bisection algorithm"),
    ("zipfile", "Work with ZIP archives"),
    ("gzip", "Support for gzip files"),
    ("hashlib", "Secure hashes and message digests"),
    ("secrets", "Generate secure random numbers for managing secrets"),
    ("uuid", "UUID objects according to RFC 4122"),
    ("urllib.parse", "Parse URLs into components"),
    ("http.client", "HTTP protocol client"),
    ("sqlite3", "DB-API 2.0 interface for SQLite databases"),
    ("tempfile", "Generate temporary files and directories"),
    ("glob", "Unix style pathname pattern expansion"),
    ("fnmatch", "Unix filename pattern matching"),
    ("time", "Time access and conversions"),
    ("calendar", "General calendar-related functions"),
    ("decimal", "Decimal fixed point and floating point arithmetic"),
    ("fractions", "Rational numbers"),
    ("math", "Mathematical functions"),
    ("copy", "Shallow and deep copy operations"),
    ("pprint", "Data pretty printer"),
    ("enum", "Support for enumerations"),
    ("dataclasses", "Data Classes"),
    ("typing", "Support for type hints"),
    ("contextlib", "Utilities for with-statement contexts"),
    ("threading", "Thread-based parallelism"),
    ("queue", "A synchronized queue class"),
    ("asyncio", "Asynchronous I/O"),
    ("socket", "Low-level networking interface"),
    ("email.message", "Representing an email message"),
    ("base64", "Base16, Base32, Base64, Base85 Data Encodings"),
    ("struct", "Interpret bytes as packed binary data"),
    ("difflib", "Helpers for computing deltas"),
    ("unittest", "Unit testing framework"),
    ("doctest", "Test interactive Python examples"),
    ("shlex", "Simple lexical analysis"),
    ("operator", "Standard operators as functions"),
    ("traceback", "Print or retrieve a stack traceback"),
    ("warnings", "Warning control"),
]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _signature(obj) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    # Reprs of defaults can carry memory addresses; strip them so the output is reproducible.
    return _ADDRESS.sub("", sig)


def _cap(text: str, limit: int) -> str:
    """Cut at the last paragraph break under the limit (a docstring's first paragraphs matter most)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip()


def _public_members(module) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = sorted(n for n in vars(module) if not n.startswith("_"))
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        owner = getattr(obj, "__module__", "") or ""
        # Skip names a module merely re-exports from elsewhere (typing's builtins, sqlite3's
        # datetime classes, uuid's Enum): they are documented where they live.
        if owner in ("builtins", "abc", "types"):
            continue
        if inspect.isclass(obj) and not owner.startswith("_") and owner.split(".")[0] != module.__name__.split(".")[0]:
            continue
        out.append((name, obj))
    return out[:MAX_MEMBERS]


def _entry(name: str, obj) -> str | None:
    # The object's own docstring only: getdoc() would lend a bare subclass its base's text
    # ("Common base class for all non-exit exceptions."), which documents nothing here.
    doc = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else None
    doc = inspect.cleandoc(doc) if doc else ""
    if not doc:
        return None
    return f"{name}{_signature(obj)}\n{_cap(doc, MEMBER_CAP)}"


def _methods(cls) -> list[tuple[str, object]]:
    """Public methods the class itself defines (inherited ones are documented on their own class)."""
    out = []
    for name, raw in vars(cls).items():
        if name.startswith("_"):
            continue
        obj = getattr(cls, name, None)
        if isinstance(raw, (classmethod, staticmethod)) or inspect.isroutine(obj):
            out.append((f"{cls.__name__}.{name}", obj))
    return out[:MAX_METHODS]


def _entries(module) -> list[str]:
    entries = []
    for member, obj in _public_members(module):
        entry = _entry(member, obj)
        methods = [e for e in (_entry(n, m) for n, m in _methods(obj)) if e] if inspect.isclass(obj) else []
        if entry is None and methods:
            entry = f"{member}{_signature(obj)}"  # an undocumented class whose methods are documented
        if entry is None:
            continue
        entries.append(entry)
        entries.extend(methods)
    return entries


def build_corpus() -> list[dict]:
    docs = []
    for name, title in MODULES:
        module = importlib.import_module(name)
        head = inspect.getdoc(module) or ""
        parts = [_cap(head, 4_000)] if head else []
        size = len(parts[0]) if parts else 0
        for entry in _entries(module):
            if size + len(entry) + 2 > DOC_CAP:
                break
            parts.append(entry)
            size += len(entry) + 2
        docs.append(
            {"doc_id": f"stdlib:{name}", "title": f"{name} — {title}", "text": "\n\n".join(parts), "source": SOURCE}
        )
    return docs


def chunk_corpus(docs: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """doc_id -> [(chunk_id, text)], exactly as annotation.services.corpus.corpus_import chunks."""
    return {
        d["doc_id"]: [
            (chunk_id(d["doc_id"], i), t) for i, t in enumerate(chunk_text(d["text"], max_chars=DEFAULT_MAX_CHARS))
        ]
        for d in docs
    }


class GoldNotFound(Exception):
    pass


def _locate(chunks: dict[str, list[tuple[str, str]]], ref: tuple) -> tuple[str, str]:
    """(chunk_id, exact gold text) for a (doc, sentence[, after]) reference; the sentence's spaces
    stand for any run of whitespace (docstrings are hard-wrapped), the text returned is the chunk's own."""
    doc_id, sentence, *rest = ref
    after = rest[0] if rest else None
    passages = chunks.get(doc_id)
    if passages is None:
        raise GoldNotFound(f"unknown document {doc_id}")
    pattern = re.compile(r"\s+".join(re.escape(word) for word in sentence.split()))
    start = 0
    if after is not None:
        starts = [i for i, (_, text) in enumerate(passages) if text.startswith(after)]
        if not starts:
            raise GoldNotFound(f"{doc_id}: no chunk starts with {after!r}")
        start = starts[0]
    hits = [(cid, m.group(0)) for cid, text in passages[start:] for m in [pattern.search(text)] if m]
    if not hits:
        raise GoldNotFound(f"{doc_id}: {sentence!r} is in no chunk")
    if after is None and len(hits) > 1:
        raise GoldNotFound(
            f"{doc_id}: {sentence!r} is in {len(hits)} chunks ({', '.join(c for c, _ in hits)}); give `after`"
        )
    return hits[0]


def build_questions(chunks, questions) -> list[dict]:
    """The labelled-set records, key order as a person would write them."""
    records = []
    for i, q in enumerate(questions):
        record = {
            "qid": q["qid"],
            "question": q["question"],
            "asked_by": q["asked_by"],
            "source": q["source"],
            "stratum": q["stratum"],
        }
        if "gold" in q:
            cid, text = _locate(chunks, q["gold"])
            record.update(gold_doc_id=q["gold"][0], gold_chunk_id=cid, gold_text=text)
        else:
            record.update(gold_doc_id=None, gold_chunk_id=None, gold_text=None)
        record["expected"] = (
            q["expected"]
            if q["expected"] is not None
            else "Not answerable from the corpus: the system should say it cannot answer."
        )
        record["grading"] = q["grading"]
        record["labelled_by"] = LABELLERS[i % len(LABELLERS)]
        record["labelled_at"] = f"2026-05-{12 + i // 10:02d}"
        if "extra" in q:
            record["gold_extra_chunk_ids"] = [_locate(chunks, ref)[0] for ref in q["extra"]]
        if "note" in q:
            record["note"] = q["note"]
        records.append(record)
    return records


def verify_questions(records, chunks) -> None:
    """Every gold sentence is a substring of its gold chunk; every chunk id exists. Stops otherwise."""
    text_of = {cid: text for passages in chunks.values() for cid, text in passages}
    for r in records:
        if r["gold_chunk_id"] is None:
            assert r["stratum"] == "no_answer", r["qid"]
            continue
        assert r["gold_chunk_id"].startswith(r["gold_doc_id"] + "#"), r["qid"]
        assert r["gold_text"] in text_of[r["gold_chunk_id"]], f"{r['qid']}: gold_text not in {r['gold_chunk_id']}"
        for cid in r.get("gold_extra_chunk_ids", []):
            assert cid in text_of, f"{r['qid']}: unknown extra chunk {cid}"


def _stable_int(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12], 16)


def _retrieval(record, rank, system, chunks, all_ids, depth=5) -> list[str]:
    """A plausible ranked list: the gold chunk at `rank` (absent when None), the other slots filled
    with the gold chunk's neighbours (near misses from the same docstring) and unrelated passages."""
    gold = record["gold_chunk_id"]
    if gold is None:
        rank = None  # nothing to find: the list is all distractors
    fillers: list[str] = []
    if gold:
        passages = [cid for cid, _ in chunks[record["gold_doc_id"]]]
        at = passages.index(gold)
        for step in (1, -1, 2, -2, 3, -3):
            if 0 <= at + step < len(passages):
                fillers.append(passages[at + step])
        fillers = [c for c in fillers if c not in record.get("gold_extra_chunk_ids", [])]
        fillers = fillers[:3]
    seed = _stable_int(record["qid"], system)
    while len(fillers) < depth + 2:
        candidate = all_ids[seed % len(all_ids)]
        seed = _stable_int(str(seed))
        if candidate != gold and candidate not in fillers:
            fillers.append(candidate)
    ranked = list(fillers)
    # A system that found the gold passage of a comparison usually found its pair too.
    for extra in record.get("gold_extra_chunk_ids", []):
        if rank is not None:
            ranked.insert(min(rank, depth - 1), extra)
    if rank is not None:
        ranked.insert(rank - 1, gold)
    return ranked[:depth]


RUNS = {
    "v1": {
        "file": "run_baseline.jsonl",
        "run_id": "demo-rag-v1",
        "system": "rag-v1",
        "prompt_k": 3,
        "model_snapshot": "demo-llm-2026-03-01",
        "index_id": "stdlib-index@2026-05-20",
        "started_at": "2026-06-01T02:00:00Z",
        "harness_commit": "4f2c9e1",
    },
    "v2": {
        "file": "run_candidate.jsonl",
        "run_id": "demo-rag-v2",
        "system": "rag-v2",
        "prompt_k": 4,
        "model_snapshot": "demo-llm-2026-03-01",
        "index_id": "stdlib-index-hybrid@2026-05-28",
        "started_at": "2026-06-02T02:00:00Z",
        "harness_commit": "4f2c9e1",
    },
}


def build_run(key, records, questions, chunks) -> list[dict]:
    spec = RUNS[key]
    all_ids = [cid for passages in chunks.values() for cid, _ in passages]
    header = {
        "run_id": spec["run_id"],
        "system": spec["system"],
        "dataset": DATASET,
        "model_snapshot": spec["model_snapshot"],
        "prompt_hash": "sha256:" + hashlib.sha256(f"{spec['system']} prompt".encode()).hexdigest(),
        "evaluator_version": "demo-harness-1.4",
        "evaluator_config_hash": "sha256:" + hashlib.sha256(b"demo-harness-1.4 default").hexdigest(),
        "harness_commit": spec["harness_commit"],
        "index_id": spec["index_id"],
        "started_at": spec["started_at"],
    }
    rows = [header]
    by_qid = {r["qid"]: r for r in records}
    for q in questions:
        code, rank, text = q[key]
        record = by_qid[q["qid"]]
        ranked = _retrieval(record, rank, spec["system"], chunks, all_ids)
        assert len(set(ranked)) == len(ranked), q["qid"]
        assert (ranked.index(record["gold_chunk_id"]) + 1 if record["gold_chunk_id"] in ranked else None) == (
            rank if record["gold_chunk_id"] else None
        ), q["qid"]
        rows.append(
            {
                "qid": q["qid"],
                "answer": text,
                "correct": CODES[code][0],
                "retrieved": [{"chunk_id": cid, "rank": i} for i, cid in enumerate(ranked, start=1)],
                "prompt_chunks": ranked[: spec["prompt_k"]],
            }
        )
    return rows


def build_labels(questions) -> list[dict]:
    """ann1 and ann2 grade every answer of both runs; they disagree where the code says so."""
    rows = []
    # Each annotator works through both runs on their own day, about two minutes an answer.
    for position, (annotator, day) in enumerate((("ann1", 3), ("ann2", 4))):
        minute = 0
        for key in ("v1", "v2"):
            for q in questions:
                verdicts = CODES[q[key][0]][1:]
                verdict = verdicts[position]
                minute += 2
                at = f"2026-06-{day:02d}T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"
                row = {
                    "run_id": RUNS[key]["run_id"],
                    "qid": q["qid"],
                    "annotator": annotator,
                    "verdict": verdict,
                    "labelled_at": at,
                }
                if len(set(verdicts)) > 1:
                    row["rationale"] = (
                        "covers the point the question turns on"
                        if verdict == "correct"
                        else "incomplete: misses part of the expected answer"
                    )
                rows.append(row)
    return rows


def write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _summary(records, runs, labels) -> str:
    strata = Counter(r["stratum"] for r in records)
    lines = [f"questions: {len(records)} " + ", ".join(f"{k} {v}" for k, v in strata.items())]
    for key, rows in runs.items():
        answers = rows[1:]
        right = sum(a["correct"] for a in answers)
        lines.append(
            f"{RUNS[key]['run_id']}: {len(answers)} answers, harness {right}/{len(answers)} = {100 * right / len(answers):.2f}%"
        )
    pairs: dict[tuple, list[str]] = {}
    for label in labels:
        pairs.setdefault((label["run_id"], label["qid"]), []).append(label["verdict"])
    split = sum(1 for v in pairs.values() if len(set(v)) > 1)
    lines.append(
        f"labels: {len(labels)} on {len(pairs)} answers, {split} disagreements ({100 * split / len(pairs):.1f}%)"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else OUT
    questions = load_questions()
    docs = build_corpus()
    chunks = chunk_corpus(docs)
    if "--dump-chunks" in argv:
        for _doc_id, passages in chunks.items():
            for cid, text in passages:
                print(f"=== {cid}\n{text}\n")
        return 0
    try:
        records = build_questions(chunks, questions)
    except GoldNotFound as exc:
        print(f"gold passage problem: {exc}", file=sys.stderr)
        return 1
    verify_questions(records, chunks)
    strata = Counter(r["stratum"] for r in records)
    assert set(strata) == set(STRATA), strata
    runs = {key: build_run(key, records, questions, chunks) for key in RUNS}
    labels = build_labels(questions)

    write_jsonl(out / "corpus.jsonl", docs)
    write_jsonl(out / "questions.jsonl", records)
    for key, rows in runs.items():
        write_jsonl(out / RUNS[key]["file"], rows)
    write_jsonl(out / "labels.jsonl", labels)
    total = (out / "corpus.jsonl").stat().st_size
    print(f"corpus: {len(docs)} documents, {sum(map(len, chunks.values()))} chunks, {total} bytes")
    print(_summary(records, runs, labels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
