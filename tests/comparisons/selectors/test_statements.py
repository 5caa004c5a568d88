"""compare and diff_datasets read a fixed number of statements, whatever the number of questions, of
questions graded by a rule or by human labels, and of modified questions."""

import pytest

from annotation.models import Answer, Run
from annotation.selectors.datasets import dataset_get
from comparisons.selectors.compare import compare_runs
from comparisons.selectors.diff import dataset_diff
from tests.comparisons.support import import_questions, import_run, q, qids

pytestmark = pytest.mark.django_db

STRATA = ("policy_lookup", "procedural", "comparison")
# The same bound at both sizes: what grows with the set must not be the number of statements.
COMPARE_STATEMENTS = 20
DIFF_STATEMENTS = 14


def build(tmp_path, n: int) -> dict:
    """`support` v1 of n questions (two fifths graded by the span rule, the rest by rubric) and v2 with
    two fifths of them relabelled, n // 20 removed and n // 20 added; runs A and B on v1, C on v2. Each run
    leaves the rule-graded and most rubric answers to be graded here (no harness score): the span answers
    by the rule, the rubric ones by their final human verdict; B regresses on a few, improves on others."""
    ids = qids(n)

    def record(i: int, qid: str, relabelled: bool = False) -> dict:
        span = i % 5 < 2
        return q(
            qid,
            stratum=STRATA[i % 3],
            grading="span" if span else "rubric",
            expected=(f"fact {qid} corrected" if relabelled else f"fact {qid}"),
        )

    v1 = import_questions(tmp_path, "support", [record(i, x) for i, x in enumerate(ids)], "v1")
    kept = ids[: n - n // 20]
    added = qids(n // 20, start=n)
    v2_records = [record(i, x, relabelled=i % 5 in (0, 3)) for i, x in enumerate(kept)]
    v2_records += [record(i, x) for i, x in enumerate(added)]
    v2 = import_questions(tmp_path, "support", v2_records, "v2")

    def run(run_id: str, version: dict, members: list[str], right) -> None:
        correct = {x: (None if i % 5 != 4 else right(i)) for i, x in enumerate(members)}
        answers = {x: (f"It is fact {x}." if right(i) else "No idea.") for i, x in enumerate(members)}
        import_run(
            tmp_path,
            run_id=run_id,
            system=f"sys-{run_id}",
            dataset="support",
            dataset_hash=version["dataset_hash"],
            correct=correct,
            answers=answers,
        )
        for verdict, ok in (("correct", True), ("incorrect", False)):
            graded_here = [x for i, x in enumerate(members) if i % 5 == 2 and bool(right(i)) is ok]
            Answer.objects.filter(run__run_id=run_id, qid__in=graded_here).update(
                final_verdict=verdict, final_source="agreement"
            )

    run("A", v1, ids, lambda i: i % 7 != 0)
    run("B", v1, ids, lambda i: i % 7 != 0 if i % 11 else i % 7 == 0)
    # C answers v2's relabelled questions with the old fact: wrong under the new expected answer.
    c_members = kept + added
    run("C", v2, c_members, lambda i: i % 7 != 0)
    relabelled = [x for i, x in enumerate(kept) if i % 5 in (0, 3)]
    return {"v1": v1, "v2": v2, "relabelled": relabelled}


@pytest.mark.parametrize("n", [40, 1_500])
def test_compare_reads_the_same_statements_at_any_size(tmp_path, n, django_assert_max_num_queries):
    build(tmp_path, n)
    with django_assert_max_num_queries(COMPARE_STATEMENTS):
        out = compare_runs(run_a="A", run_b="B", iters=200)
    # Every answer graded: by harness, rule or human verdict (a fifth of the rubric ones have neither).
    assert out["grading"]["a"]["sources"] == {"harness": n // 5, "span": 2 * n // 5, "human": n // 5}
    assert out["n"] == n - n // 5
    assert out["regressions"] and out["b_only"]
    assert set(out["per_stratum"]) == set(STRATA)


@pytest.mark.parametrize("n", [40, 1_500])
def test_diff_reads_the_same_statements_at_any_size(tmp_path, n, django_assert_max_num_queries):
    built = build(tmp_path, n)
    for run_id in ("A", "C"):  # the diff needs every question scored
        Answer.objects.filter(run__run_id=run_id, correct__isnull=True, final_verdict="").update(correct=True)
    dataset = dataset_get("support")
    run_old, run_new = Run.objects.get(run_id="A"), Run.objects.get(run_id="C")
    with django_assert_max_num_queries(DIFF_STATEMENTS):
        out = dataset_diff(dataset, "1", "2", run_old=run_old, run_new=run_new)
    assert out["modified"] == sorted(built["relabelled"])
    assert out["modified_by"]["expected"] == sorted(built["relabelled"])
    assert len(out["added"]) == len(out["removed"]) == n // 20
    assert out["movement"]["n_new"] == n
