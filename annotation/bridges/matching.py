"""How a bridge finds the question a foreign row answers: by a qid the row gives, by the id another tool
gave the question when it was imported from there (kept on the record), or by the question's exact text.
"""

import json
from typing import Any

from annotation.models import Dataset
from annotation.selectors.datasets import latest_version, version_records


def dataset_records(dataset_name: str | None) -> list[dict[str, Any]]:
    """The question records of the dataset's latest version (none for no dataset or no version)."""
    dataset = Dataset.objects.filter(name=dataset_name).first() if dataset_name else None
    version = latest_version(dataset) if dataset is not None else None
    if version is None:
        return []
    return [json.loads(text) for _qid, text in version_records(version)]


def qids_by_key(records: list[dict[str, Any]], key: str) -> dict[str, str]:
    """Another tool's id of a question (the record's `key`, e.g. langsmith_example_id) -> its qid."""
    return {r[key]: r["qid"] for r in records if isinstance(r.get(key), str)}


def qids_by_text(records: list[dict[str, Any]]) -> dict[str, str | None]:
    """A question's exact text -> its qid; None for a text two questions share (it names neither)."""
    found: dict[str, str | None] = {}
    for r in records:
        text = r.get("question")
        if isinstance(text, str):
            found[text] = None if text in found else r["qid"]
    return found
