"""Dataset reads: the partition of two versions worked out by the database is the manifest diff."""

import random

import pytest
from django.db import connection

from annotation.selectors import datasets
from annotation.selectors.datasets import version_diff, version_manifest
from evalstats.manifest import ManifestDiff, diff_manifests
from tests.factories import DatasetFactory, record, version

pytestmark = pytest.mark.django_db


STRATA = ["policy_lookup", "procedural", "no_answer"]


@pytest.fixture(params=["joined", "by_lookup"])
def partition_path(request, monkeypatch):
    """Both ways the database works the partition out: one FULL OUTER JOIN (PostgreSQL), and a lookup of
    each new line in the old version (SQLite, and PostgreSQL when a qid holds the separator); `joined`
    asserts on PostgreSQL that the one-statement path really ran."""
    calls: list[int] = []
    joined = datasets._version_diff_joined

    def counted(old, new):
        calls.append(1)
        return joined(old, new)

    if request.param == "by_lookup":
        monkeypatch.setattr(datasets, "_version_diff_joined", lambda old, new: None)
    else:
        monkeypatch.setattr(datasets, "_version_diff_joined", counted)
    yield request.param
    if request.param == "joined" and connection.vendor == "postgresql":
        assert calls and all(calls)


def test_the_database_partition_of_two_versions_is_the_manifest_diff(partition_path):
    rng = random.Random(7)
    records = [record(f"q-{i:04d}", stratum=rng.choice(STRATA)) for i in range(80)]
    edited, removed, modified = [], [], []
    for r in records:
        if rng.random() <= 0.1:
            removed.append(r["qid"])
        elif rng.random() < 0.2:
            modified.append(r["qid"])
            edited.append(dict(r, expected="relabelled"))
        else:
            edited.append(r)
    added = [f"q-{i:04d}" for i in range(500, 506)]
    edited += [record(qid) for qid in added]
    support = DatasetFactory.create(name="support")
    v1 = version(support, records)
    v2 = version(support, edited, parent=v1)

    unchanged = sorted({r["qid"] for r in records} - set(removed) - set(modified))
    expected = ManifestDiff(
        added=tuple(added), removed=tuple(removed), modified=tuple(modified), unchanged=tuple(unchanged)
    )
    assert expected.removed and expected.modified and len(unchanged) > 50  # the seed makes all four non-trivial
    assert version_diff(v1, v2) == expected == diff_manifests(version_manifest(v1), version_manifest(v2))
    assert version_diff(v2, v1) == ManifestDiff(
        added=tuple(removed), removed=tuple(added), modified=tuple(modified), unchanged=tuple(unchanged)
    )
    assert version_diff(v1, v1) == ManifestDiff(
        added=(), removed=(), modified=(), unchanged=tuple(r["qid"] for r in records)
    )


def test_a_qid_holding_the_separator_is_partitioned_by_reading_the_rows():
    support = DatasetFactory.create(name="support")
    odd = "q-\x1f-odd"
    v1 = version(support, [record("q-1"), record(odd)])
    v2 = version(support, [record("q-1", expected="relabelled"), record(odd), record("q-2")], parent=v1)
    assert datasets._version_diff_joined(v1, v2) is None  # PostgreSQL: the joined string does not split
    assert version_diff(v1, v2) == ManifestDiff(added=("q-2",), removed=(), modified=("q-1",), unchanged=(odd,))


def test_the_partition_is_one_statement(django_assert_num_queries):
    support = DatasetFactory.create(name="support")
    v1 = version(support, [record(f"q-{i}") for i in range(30)])
    v2 = version(support, [record(f"q-{i}") for i in range(5, 40)], parent=v1)
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        diff = version_diff(v1, v2)
    assert (len(diff.added), len(diff.removed), len(diff.modified), len(diff.unchanged)) == (10, 5, 0, 25)
