"""Dataset reads: the partition of two versions worked out by the database is the manifest diff."""
import random

import pytest

from annotation.selectors.datasets import version_diff, version_manifest
from evalstats.manifest import ManifestDiff, diff_manifests
from tests.factories import DatasetFactory, record, version

pytestmark = pytest.mark.django_db


STRATA = ["policy_lookup", "procedural", "no_answer"]


def test_the_database_partition_of_two_versions_is_the_manifest_diff():
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
    support = DatasetFactory(name="support")
    v1 = version(support, records)
    v2 = version(support, edited, parent=v1)

    unchanged = sorted({r["qid"] for r in records} - set(removed) - set(modified))
    expected = ManifestDiff(added=tuple(added), removed=tuple(removed), modified=tuple(modified),
                            unchanged=tuple(unchanged))
    assert expected.removed and expected.modified and len(unchanged) > 50   # the seed makes all four non-trivial
    assert version_diff(v1, v2) == expected == diff_manifests(version_manifest(v1), version_manifest(v2))
    assert version_diff(v2, v1) == ManifestDiff(added=tuple(removed), removed=tuple(added), modified=tuple(modified),
                                                unchanged=tuple(unchanged))
    assert version_diff(v1, v1) == ManifestDiff(added=(), removed=(), modified=(),
                                                unchanged=tuple(r["qid"] for r in records))
