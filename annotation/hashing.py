"""Content hashes of question records and dataset manifests, exactly as INTERFACES.md defines them."""

import hashlib
import json
from collections.abc import Iterable


def canonical_json(record: dict) -> str:
    """The canonical JSON text of a record: sorted keys, compact separators, UTF-8 kept as is."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def example_sha256(record: dict) -> str:
    """Hex sha256 of the record's canonical JSON (every key, unknown ones and nulls included)."""
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def canonical_and_sha256(record: dict) -> tuple[str, str]:
    """The record's canonical JSON and its hex sha256, the text built once (an import stores both)."""
    text = canonical_json(record)
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def dataset_hash(manifest: Iterable[tuple[str, str]]) -> str:
    """`sha256:` + sha256 of the lines `qid<TAB>example_sha256`, sorted by qid, joined by newlines."""
    lines = "\n".join(f"{qid}\t{sha}" for qid, sha in sorted(manifest))
    return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()
