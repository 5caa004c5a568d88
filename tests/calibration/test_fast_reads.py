"""The fast paths over a million rows against the plain ones they replace, on small data, on both
databases: values joined by the database (evalapp.db), the partition of two versions worked out by the
database (annotation.selectors.version_diff), and comparisons done as set algebra over qids
(comparisons.selectors, calibration.selectors.grades.RunGrades)."""
import random

import pytest

from annotation.selectors.datasets import dataset_get, version_get, version_strata
from tests.calibration.test_compare_support import (
    import_questions,
    import_run,
    q,
    qids,
    run_command,
)

pytestmark = pytest.mark.django_db

STRATA = ["policy_lookup", "procedural", "no_answer"]


def test_joined_values_are_the_column_and_survive_a_value_holding_the_separator(tmp_path):
    from annotation.models import Answer, Run
    from evalapp.db import column_strings, column_strings_by

    v = import_questions(tmp_path, "support", [q(i) for i in qids(30)], "v1")
    import_run(tmp_path, run_id="A", system="s", dataset="support", dataset_hash=v["dataset_hash"],
               correct={i: (None if n % 7 == 0 else n % 3 != 0) for n, i in enumerate(qids(30))})
    answers = Answer.objects.filter(run__run_id="A")
    assert sorted(column_strings(answers, "qid")) == sorted(answers.values_list("qid", flat=True))
    grouped = column_strings_by(answers, "correct", "qid")
    assert {k: sorted(v) for k, v in grouped.items()} == {
        True: sorted(answers.filter(correct=True).values_list("qid", flat=True)),
        False: sorted(answers.filter(correct=False).values_list("qid", flat=True)),
        None: sorted(answers.filter(correct__isnull=True).values_list("qid", flat=True))}
    assert column_strings(answers.filter(qid="no such qid"), "qid") == []
    assert column_strings_by(answers.filter(qid="no such qid"), "correct", "qid") == {}

    # A value holding the separator cannot split into extra values: the rows are read instead.
    Answer.objects.create(run=Run.objects.get(run_id="A"), qid="odd\x1fqid", correct=True)
    assert sorted(column_strings(answers, "qid")) == sorted(answers.values_list("qid", flat=True))
    assert "odd\x1fqid" in column_strings_by(answers, "correct", "qid")[True]


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


def test_set_algebra_comparison_matches_the_per_question_count(tmp_path):
    """compare_runs counts with sets (and strata from B's version, then A's); count the same things
    question by question here and they must agree, stratum by stratum."""

    from annotation.models import Run
    from calibration.selectors.grades import run_grades

    rng = random.Random(11)
    v1_records = [q(i, stratum=rng.choice(STRATA)) for i in qids(120)]
    v1 = import_questions(tmp_path, "support", v1_records, "v1")
    # v2 drops 10 questions, moves some to another stratum and adds 15 in a new one.
    v2_records = [dict(r, stratum=rng.choice(STRATA)) if rng.random() < 0.1 else r for r in v1_records[10:]]
    v2_records += [q(i, stratum="comparison") for i in qids(15, start=300)]
    v2 = import_questions(tmp_path, "support", v2_records, "v2")

    def outcome():
        return rng.choice([True, True, True, False, None])

    a_correct = {r["qid"]: outcome() for r in v1_records}
    b_correct = {r["qid"]: outcome() for r in v2_records}
    import_run(tmp_path, run_id="A", system="s1", dataset="support", dataset_hash=v1["dataset_hash"], correct=a_correct)
    import_run(tmp_path, run_id="B", system="s2", dataset="support", dataset_hash=v2["dataset_hash"], correct=b_correct)

    out = run_command("compare", "A", "B", "--iters", "500")
    ga, gb = run_grades(Run.objects.get(run_id="A")), run_grades(Run.objects.get(run_id="B"))
    assert ga.scores == {k: v for k, v in a_correct.items() if v is not None}
    assert ga.tally(list(a_correct)) == (sum(v is True for v in a_correct.values()),
                                         sum(v is False for v in a_correct.values()))
    paired = sorted(k for k in a_correct if a_correct[k] is not None and b_correct.get(k) is not None)
    assert out["n"] == len(paired)
    assert out["b_only"] == sum(b_correct[k] and not a_correct[k] for k in paired)
    assert out["a_only"] == sum(a_correct[k] and not b_correct[k] for k in paired)
    assert out["regressions"] == [k for k in paired if a_correct[k] and not b_correct[k]]
    both = set(a_correct) & set(b_correct)
    only_a, only_b, unscored = len(set(a_correct) - both), len(set(b_correct) - both), len(both) - len(paired)
    assert only_a == 10 and only_b == 15 and unscored > 0
    assert out["pairing"] == {"paired": len(paired), "dropped": only_a + only_b + unscored,
                              "answered_only_a": only_a, "answered_only_b": only_b, "unscored": unscored}

    stratum_of = {**version_strata(version_get(dataset_get("support"), "1")),
                  **version_strata(version_get(dataset_get("support"), "2"))}
    expected = {}
    for k in paired:
        s = expected.setdefault(stratum_of[k], {"n": 0, "b_only": 0, "a_only": 0})
        s["n"] += 1
        s["b_only"] += bool(b_correct[k] and not a_correct[k])
        s["a_only"] += bool(a_correct[k] and not b_correct[k])
    assert {name: {k: s[k] for k in ("n", "b_only", "a_only")} for name, s in out["per_stratum"].items()} == expected
    assert list(out["per_stratum"]) == sorted(expected)
