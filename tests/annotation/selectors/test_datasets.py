"""Dataset reads: the partition of two versions worked out by the database is the manifest diff."""
import random

import pytest

from tests.comparisons.support import (
    import_questions,
    q,
    qids,
)

pytestmark = pytest.mark.django_db


STRATA = ["policy_lookup", "procedural", "no_answer"]


def test_the_database_partition_of_two_versions_is_the_manifest_diff(tmp_path):
    from annotation.selectors.datasets import (
        dataset_get,
        version_diff,
        version_get,
        version_manifest,
    )
    from evalstats.manifest import diff_manifests

    rng = random.Random(7)
    records = [q(i, stratum=rng.choice(STRATA)) for i in qids(80)]
    import_questions(tmp_path, "support", records, "v1")
    edited = [dict(r, expected="relabelled") if rng.random() < 0.2 else r for r in records if rng.random() > 0.1]
    edited += [q(i) for i in qids(6, start=500)]
    import_questions(tmp_path, "support", edited, "v2")
    ds = dataset_get("support")
    v1, v2 = version_get(ds, "1"), version_get(ds, "2")
    expected = diff_manifests(version_manifest(v1), version_manifest(v2))
    assert expected.added and expected.removed and expected.modified and expected.unchanged
    assert version_diff(v1, v2) == expected
    assert version_diff(v2, v1) == diff_manifests(version_manifest(v2), version_manifest(v1))
    assert version_diff(v1, v1).unchanged == tuple(sorted(version_manifest(v1)))
