"""Labelled sets, their versions and the working copy: lookups, manifests, strata, records and the
four partitions between two versions."""

import json
from collections.abc import Iterator

from django.db import connections
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)

from annotation.models import Dataset, DatasetVersion, VersionEntry, WorkingExample
from evalapp.db import SEPARATOR, column_strings, column_strings_by, raw_values, split_joined
from evalapp.errors import NotFound
from evalstats.manifest import ManifestDiff


def dataset_get(name: str) -> Dataset:
    """The dataset by name, or NotFound naming it."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise NotFound(f"unknown dataset {name!r}")
    return dataset


def latest_version(dataset: Dataset) -> DatasetVersion | None:
    return dataset.versions.order_by("-number").first()


def version_get(dataset: Dataset, ref: str | None = None) -> DatasetVersion:
    """A version by its hash (with or without `sha256:`, or a unique prefix), number (`v3`/`3`), or the latest."""
    if not ref:
        version = latest_version(dataset)
        if version is None:
            raise NotFound(f"dataset {dataset.name!r} has no version yet")
        return version
    versions = dataset.versions.all()
    if ref.lstrip("v").isdigit() and len(ref.lstrip("v")) < 8:
        found = versions.filter(number=int(ref.lstrip("v"))).first()
        if found:
            return found
    digest = ref if ref.startswith("sha256:") else "sha256:" + ref
    matches = list(versions.filter(dataset_hash__startswith=digest)[:2])
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise NotFound(f"version {ref!r} is ambiguous in dataset {dataset.name!r}; give more of the hash")
    raise NotFound(f"unknown version {ref!r} of dataset {dataset.name!r}")


def version_manifest(version: DatasetVersion) -> dict[str, str]:
    """qid -> example sha256 for one version, in qid order (straight off the (version, qid) index)."""
    return dict(raw_values(VersionEntry.objects.filter(version=version).order_by("qid"), "qid", "example_id"))


# The four partitions as (the side whose qid names it, when a joined pair of lines falls in it), for the
# one-statement diff below: `n` is a line of the new version, `o` one of the old, either absent (NULL).
# A modified qid comes with both example hashes (hex: never the separator), three values per line.
_PARTITIONS = {
    "added": ("n.qid", "o.qid IS NULL"),
    "removed": ("o.qid", "n.qid IS NULL"),
    "modified": ("n.qid || %s || o.example_id || %s || n.example_id", "o.example_id <> n.example_id"),
    "unchanged": ("n.qid", "o.example_id = n.example_id"),
}


def version_diff(old: DatasetVersion, new: DatasetVersion) -> ManifestDiff:
    """`version_diff_detail` without the example pairs."""
    return version_diff_detail(old, new)[0]


def version_diff_detail(
    old: DatasetVersion, new: DatasetVersion
) -> tuple[ManifestDiff, dict[str, tuple[str, str]] | None]:
    """The four-way partition of qids between two stored versions (evalstats.manifest), worked out by the
    database, and the qids of each partition come back joined into one string (evalapp.db), so a million
    lines cross into Python as four strings rather than two million rows and two dicts.

    PostgreSQL: one statement, the two versions' lines joined on qid by a FULL OUTER JOIN (one merge join
    over both, in qid order: 1.1 s at a million lines where a lookup per line took 2.5 s). SQLite (whose
    FULL JOIN of two filtered halves of one table finds no index and runs for minutes at that size), or a
    qid holding the separator: each new line looks its qid up in the old on the (version, qid) index, and
    the removed lines are a second statement.

    With it, each modified qid's (old example, new example) hashes, which the joined statement reads on the
    way (so the modified records can be read by hash alone, comparisons.selectors.diff.modified_fields);
    None where the partition was worked out by lookup."""
    found = _version_diff_joined(old, new)
    return found if found is not None else (_version_diff_by_lookup(old, new), None)


def _version_diff_joined(
    old: DatasetVersion, new: DatasetVersion
) -> tuple[ManifestDiff, dict[str, tuple[str, str]]] | None:
    connection = connections[VersionEntry.objects.db]
    if connection.vendor != "postgresql":
        return None
    table = connection.ops.quote_name(VersionEntry._meta.db_table)
    select = ", ".join(
        f"COUNT(*) FILTER (WHERE {where}), STRING_AGG({side}, %s) FILTER (WHERE {where})"
        for side, where in _PARTITIONS.values()
    )
    # Both versions' lines in code point order off the (version, qid COLLATE "C") index, so the planner
    # merges them (no sort) where it hashed a million lines in batches spilled to disk: at a million lines
    # 1.41-1.62 s -> 1.11-1.18 s (EXPLAIN ANALYZE, alternating), and each list comes out in the order
    # Python sorts it to.
    # Equality in the "C" collation is the same as in the column's own (both compare the bytes).
    lines = f'(SELECT qid, example_id FROM {table} WHERE version_id = %s ORDER BY qid COLLATE "C")'
    sql = f'SELECT {select} FROM {lines} AS n FULL OUTER JOIN {lines} AS o ON o.qid COLLATE "C" = n.qid COLLATE "C"'
    separators = [SEPARATOR] * sum(side.count("%s") + 1 for side, _ in _PARTITIONS.values())
    with connection.cursor() as cursor:
        cursor.execute(sql, [*separators, new.pk, old.pk])
        row = cursor.fetchone()
    out = {}
    pairs: dict[str, tuple[str, str]] = {}
    for i, name in enumerate(_PARTITIONS):
        width = 3 if name == "modified" else 1
        values = split_joined(row[2 * i] * width, row[2 * i + 1])
        if values is None:
            return None
        if name == "modified":
            pairs = {values[j]: (values[j + 1], values[j + 2]) for j in range(0, len(values), 3)}
            values = list(pairs)
        out[name] = tuple(sorted(values))
    return ManifestDiff(**out), pairs


def _version_diff_by_lookup(old: DatasetVersion, new: DatasetVersion) -> ManifestDiff:
    """The same partition, each line of `new` looking its qid up in `old` on the (version, qid) index."""
    in_old = VersionEntry.objects.filter(version=old, qid=OuterRef("qid"))
    # NULL: not in old (added); true: same example (unchanged); false: modified. 1/0 on SQLite.
    same = ExpressionWrapper(Q(old_example=F("example_id")), output_field=BooleanField())
    lines = (
        VersionEntry.objects.filter(version=new)
        .annotate(old_example=Subquery(in_old.values("example_id")[:1]))
        .annotate(same=same)
    )
    by_same = column_strings_by(lines, "same", "qid")
    removed = column_strings(
        VersionEntry.objects.filter(version=old).filter(
            ~Exists(VersionEntry.objects.filter(version=new, qid=OuterRef("qid")))
        ),
        "qid",
    )
    return ManifestDiff(
        added=tuple(sorted(by_same.get(None, []))),
        removed=tuple(sorted(removed)),
        modified=tuple(sorted(by_same.get(False, []))),
        unchanged=tuple(sorted(by_same.get(True, []))),
    )


def version_strata(version: DatasetVersion | None) -> dict[str, str]:
    """qid -> stratum of a version's questions, read straight off the manifest lines (one sequential
    pass, no join to the wide example table; each stratum name stored once). Memory stays
    proportional to the manifest."""
    if version is None:
        return {}
    names: dict[str, str] = {}
    return {
        qid: names.setdefault(stratum, stratum)
        for qid, stratum in raw_values(VersionEntry.objects.filter(version=version), "qid", "stratum")
    }


def version_gradings(version: DatasetVersion | None) -> dict[str, str | None]:
    """qid -> the grading rule kept on each of a version's lines (None: not kept, read the record)."""
    if version is None:
        return {}
    names: dict[str | None, str | None] = {}
    return {
        qid: names.setdefault(rule, rule)
        for qid, rule in raw_values(VersionEntry.objects.filter(version=version), "qid", "grading")
    }


def version_stratum_qids(version: DatasetVersion | None) -> dict[str, list[str]]:
    """stratum -> the qids of a version in it (in no particular order), in one round trip: the
    shape set algebra over a million questions wants (comparisons.selectors)."""
    if version is None:
        return {}
    return column_strings_by(VersionEntry.objects.filter(version=version), "stratum", "qid")


def version_strata_counts(version: DatasetVersion) -> dict[str, int]:
    """stratum -> number of questions in a version."""
    rows = VersionEntry.objects.filter(version=version).values("stratum").annotate(n=Count("id"))
    return {r["stratum"]: r["n"] for r in rows}


def version_records(version: DatasetVersion) -> Iterator[tuple[str, str]]:
    """(qid, canonical JSON) for a version, sorted by qid, streamed a chunk at a time (keyset on the qid,
    unique in a version): no cursor stays open between chunks, so a stream nobody reads to the end
    leaves nothing for the garbage collector to close later (see evalapp.db.in_id_chunks)."""
    entries = VersionEntry.objects.filter(version=version).order_by("qid").values_list("qid", "example__canonical")
    last = None
    while True:
        chunk = list((entries.filter(qid__gt=last) if last is not None else entries)[:2000])
        yield from chunk
        if len(chunk) < 2000:
            return
        last = chunk[-1][0]


def version_record(version: DatasetVersion | None, qid: str) -> dict | None:
    if version is None:
        return None
    text = VersionEntry.objects.filter(version=version, qid=qid).values_list("example__canonical", flat=True).first()
    return json.loads(text) if text is not None else None


def working_edits(dataset: Dataset) -> QuerySet[WorkingExample]:
    """Edits that are pending: made on top of the current latest version."""
    latest = latest_version(dataset)
    return (
        WorkingExample.objects.filter(dataset=dataset, base_version=latest)
        if latest
        else WorkingExample.objects.filter(dataset=dataset, base_version__isnull=True)
    )


def working_records(dataset: Dataset) -> list[dict]:
    """The working copy: the latest version with pending edits laid over it, sorted by qid.

    Each item: {"qid", "record", "revision", "edited"}.
    """
    latest = latest_version(dataset)
    records = {
        qid: {"qid": qid, "record": json.loads(text), "revision": 0, "edited": False}
        for qid, text in (version_records(latest) if latest else [])
    }
    revisions = dict(WorkingExample.objects.filter(dataset=dataset).values_list("qid", "revision"))
    for qid, item in records.items():
        item["revision"] = revisions.get(qid, 0)
    for edit in working_edits(dataset):
        if edit.record is None:
            records.pop(edit.qid, None)
        else:
            records[edit.qid] = {"qid": edit.qid, "record": edit.record, "revision": edit.revision, "edited": True}
    return [records[q] for q in sorted(records)]


def versions_partition(
    dataset: Dataset, old_ref: str, new_ref: str
) -> tuple[DatasetVersion, DatasetVersion, ManifestDiff, dict]:
    """The two versions, their four partitions (added, removed, modified, unchanged) and those as a dict
    (with the dataset's name and both hashes), the part of a dataset diff that needs no run."""
    old, new = version_get(dataset, old_ref), version_get(dataset, new_ref)
    diff = version_diff(old, new)
    return old, new, diff, partition_dict(dataset, old, new, diff)


def partition_dict(dataset: Dataset, old: DatasetVersion, new: DatasetVersion, diff: ManifestDiff) -> dict:
    """The partition as the diff object's start: the dataset's name, both hashes and the four qid lists."""
    return {
        "dataset": dataset.name,
        "old": old.dataset_hash,
        "new": new.dataset_hash,
        "added": list(diff.added),
        "removed": list(diff.removed),
        "modified": list(diff.modified),
        "unchanged": list(diff.unchanged),
    }
