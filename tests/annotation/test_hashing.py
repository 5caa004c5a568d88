"""Content hashes: an example's sha256 over canonical JSON, a dataset's over its sorted manifest."""
import hashlib
import json

from annotation.hashing import canonical_json, dataset_hash, example_sha256


def test_example_hash_is_sha256_of_canonical_json_with_every_key():
    record = {"qid": "q-1", "question": "é?", "stratum": "s", "gold_text": None, "zeta": [1, {"b": 2, "a": 1}]}
    expected = hashlib.sha256(
        json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()
    assert example_sha256(record) == expected
    assert canonical_json(record) == '{"gold_text":null,"qid":"q-1","question":"é?","stratum":"s","zeta":[1,{"a":1,"b":2}]}'
    # A null is part of the content: dropping it changes the hash.
    assert example_sha256({k: v for k, v in record.items() if k != "gold_text"}) != expected


def test_dataset_hash_sorts_manifest_by_qid_and_joins_with_newlines():
    manifest = [("q-2", "b" * 64), ("q-1", "a" * 64)]
    body = f"q-1\t{'a' * 64}\nq-2\t{'b' * 64}"
    assert dataset_hash(manifest) == "sha256:" + hashlib.sha256(body.encode()).hexdigest()
    assert dataset_hash(reversed(manifest)) == dataset_hash(manifest)
