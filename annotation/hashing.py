"""Content hashes of question records and dataset manifests, exactly as INTERFACES.md defines them."""

import hashlib
import json
from collections.abc import Iterable
from json.encoder import c_encode_basestring, c_make_encoder  # type: ignore[attr-defined]

# The C encoder json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) builds on every call,
# built once (an import encodes a hundred thousand records). Its one difference, no check for circular
# references (markers None), cannot show: a record is parsed JSON or a JSON column's value.
_canonical_chunks = c_make_encoder(
    None, json.JSONEncoder().default, c_encode_basestring, None, ":", ",", True, False, True
)


def canonical_json(record: dict) -> str:
    """The canonical JSON text of a record: sorted keys, compact separators, UTF-8 kept as is (exactly
    json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False))."""
    return "".join(_canonical_chunks(record, 0))


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
