"""Importing the corpus: documents chunked into passages; changed documents retire old chunks."""

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation import search
from annotation.chunker import DEFAULT_MAX_CHARS, chunk_id, chunk_text
from annotation.models import Chunk, Document
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import check_length, read_jsonl, require_file, require_str
from evalapp.validation import raise_problems, whole_number_problem

BATCH = 2000
# Column widths (Document, Chunk).
DOC_ID_MAX = 500
TITLE_MAX = 1000
SOURCE_MAX = 200
CHUNK_ID_MAX = 600


@dataclass
class _Doc:
    doc_id: str
    title: str = ""
    source: str = ""
    text: str = ""
    # For pre-chunked lines: (chunk_id, text) in file order.
    passages: list[tuple[str, str]] = field(default_factory=list)
    prechunked: bool = False


@dataclass(frozen=True)
class CorpusImportResult:
    documents: int
    chunks: int
    retired: int

    def as_dict(self):
        return {"documents": self.documents, "chunks": self.chunks, "retired": self.retired}


def _check_chunk_owners(docs: dict[str, _Doc], chunk_lines: dict[str, int]) -> list[Problem]:
    """A pre-chunked id that is live under another document would be two passages with one id."""
    problems = []
    ids = list(chunk_lines)
    for start in range(0, len(ids), BATCH):
        for cid, owner in Chunk.objects.filter(chunk_id__in=ids[start : start + BATCH], retired=False).values_list(
            "chunk_id", "document__doc_id"
        ):
            if docs.get(owner) is None or cid not in {c for c, _ in docs[owner].passages}:
                problems.append(
                    Problem(
                        f"chunk_id {cid!r} is already a live chunk of document {owner!r}",
                        line=chunk_lines[cid],
                        field="chunk_id",
                    )
                )
    return problems


def _parse_corpus(path: Path) -> dict[str, _Doc]:
    problems: list[Problem] = []
    docs: dict[str, _Doc] = {}
    first_line: dict[str, int] = {}
    chunk_lines: dict[str, int] = {}
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
            continue
        text = obj.get("text")
        if not isinstance(text, str):
            problems.append(
                Problem("missing required key" if "text" not in obj else "must be a string", line=line, field="text")
            )
        for key in ("title", "source"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                problems.append(Problem("must be a string", line=line, field=key))
        check_length(obj, "title", TITLE_MAX, line, problems)
        check_length(obj, "source", SOURCE_MAX, line, problems)
        check_length(obj, "doc_id", DOC_ID_MAX, line, problems)
        if "chunk_id" in obj:
            cid = require_str(obj, "chunk_id", line, problems, max_length=CHUNK_ID_MAX)
            doc_id = obj.get("doc_id") or (cid.split("#", 1)[0] if cid else None)
            if not isinstance(doc_id, str) or not doc_id:
                problems.append(Problem("must be a non-empty string", line=line, field="doc_id"))
                continue
            if len(doc_id) > DOC_ID_MAX:
                if not obj.get("doc_id"):
                    problems.append(
                        Problem(
                            f"the document id before '#' is {len(doc_id)} characters long; at most "
                            f"{DOC_ID_MAX} are allowed",
                            line=line,
                            field="chunk_id",
                        )
                    )
                continue
            if cid is None or not isinstance(text, str):
                continue
            if cid in chunk_lines:
                problems.append(
                    Problem(
                        f"duplicate chunk_id {cid!r} (first on line {chunk_lines[cid]})", line=line, field="chunk_id"
                    )
                )
                continue
            chunk_lines[cid] = line
            doc = docs.setdefault(doc_id, _Doc(doc_id=doc_id, prechunked=True))
            if not doc.prechunked:
                problems.append(
                    Problem(
                        f"document {doc_id!r} is given both whole (line {first_line[doc_id]}) and as chunks",
                        line=line,
                        field="chunk_id",
                    )
                )
                continue
            first_line.setdefault(doc_id, line)
            doc.passages.append((cid, text))
            doc.title = doc.title or (obj.get("title") or "")
            doc.source = doc.source or (obj.get("source") or "")
            continue
        if isinstance(obj.get("doc_id"), str) and len(obj["doc_id"]) > DOC_ID_MAX:
            continue  # named above
        doc_id = require_str(obj, "doc_id", line, problems)
        if doc_id is None or not isinstance(text, str):
            continue
        if doc_id in docs:
            problems.append(
                Problem(f"duplicate doc_id {doc_id!r} (first on line {first_line[doc_id]})", line=line, field="doc_id")
            )
            continue
        first_line[doc_id] = line
        docs[doc_id] = _Doc(doc_id=doc_id, title=obj.get("title") or "", source=obj.get("source") or "", text=text)
    if not problems:
        problems = _check_chunk_owners(docs, chunk_lines)
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    return docs


def corpus_import(*, path: str | Path, max_chars: int = DEFAULT_MAX_CHARS) -> CorpusImportResult:
    """Import documents from JSON Lines; chunk them; retire chunks whose text changed. Atomic."""
    raise_problems("bad option", whole_number_problem(max_chars, "max_chars", minimum=1, maximum=1_000_000))
    docs = _parse_corpus(require_file(path))
    now = timezone.now()
    added_chunks = retired = 0
    with transaction.atomic():
        existing = (
            {d.doc_id: d for d in Document.objects.filter(doc_id__in=list(docs))}
            if len(docs) < 5000
            else {d.doc_id: d for d in Document.objects.all()}
        )
        new_docs, changed_docs = [], []
        for doc in docs.values():
            passages = (
                doc.passages
                if doc.prechunked
                else [
                    (chunk_id(doc.doc_id, i), text) for i, text in enumerate(chunk_text(doc.text, max_chars=max_chars))
                ]
            )
            full_text = doc.text if not doc.prechunked else "\n\n".join(t for _, t in passages)
            digest = hashlib.sha256(full_text.encode("utf-8")).hexdigest()
            row = existing.get(doc.doc_id)
            if row is None:
                row = Document(
                    doc_id=doc.doc_id,
                    title=doc.title,
                    source=doc.source,
                    text=full_text,
                    text_sha256=digest,
                    prechunked=doc.prechunked,
                )
                new_docs.append((row, passages))
            elif row.text_sha256 != digest or row.title != doc.title or row.source != doc.source:
                changed_docs.append((row, doc, full_text, digest, passages))
        Document.objects.bulk_create([row for row, _ in new_docs], batch_size=BATCH)
        if new_docs and not all(row.pk for row, _ in new_docs):
            ids = dict(Document.objects.filter(doc_id__in=[r.doc_id for r, _ in new_docs]).values_list("doc_id", "pk"))
            for row, _ in new_docs:
                row.pk = ids[row.doc_id]
        to_create = [
            Chunk(document_id=row.pk, chunk_id=cid, ordinal=i, text=text, created_at=now)
            for row, passages in new_docs
            for i, (cid, text) in enumerate(passages)
        ]
        to_retire: list[int] = []
        for row, doc, full_text, digest, passages in changed_docs:
            live = {c.chunk_id: c for c in Chunk.objects.filter(document=row, retired=False)}
            keep = set()
            for i, (cid, text) in enumerate(passages):
                old = live.get(cid)
                if old is not None and old.text == text:
                    keep.add(cid)
                    if old.ordinal != i:
                        Chunk.objects.filter(pk=old.pk).update(ordinal=i)
                    continue
                to_create.append(Chunk(document_id=row.pk, chunk_id=cid, ordinal=i, text=text, created_at=now))
            to_retire.extend(c.pk for cid, c in live.items() if cid not in keep)
            row.title, row.source, row.text, row.text_sha256 = doc.title, doc.source, full_text, digest
            row.prechunked = doc.prechunked
            row.save(update_fields=["title", "source", "text", "text_sha256", "prechunked", "updated_at"])
        if to_retire:
            for start in range(0, len(to_retire), BATCH):
                batch = to_retire[start : start + BATCH]
                Chunk.objects.filter(pk__in=batch).update(retired=True, retired_at=now)
                search.index_remove(batch)
            retired = len(to_retire)
        for start in range(0, len(to_create), BATCH):
            created = Chunk.objects.bulk_create(to_create[start : start + BATCH])
            # auto_now_add stamps each row as it is written; the import's one time is what names the
            # corpus state it made (annotation.selectors.stale_history).
            Chunk.objects.filter(pk__in=[c.pk for c in created]).update(created_at=now)
            search.index_add(created)
        added_chunks = len(to_create)
    return CorpusImportResult(documents=len(docs), chunks=added_chunks, retired=retired)
