"""Many runs scored at once give each run the score and count run_grades gives it alone."""

import pytest

from calibration.selectors.grades import run_grades
from comparisons.selectors.run_scores import HarnessScore, run_scores
from tests import factories as f


@pytest.mark.django_db
def test_run_scores_match_run_grades_in_one_statement_for_harness_scored_runs(django_assert_num_queries):
    scored = [f.RunFactory(run_id=f"scored-{i}") for i in range(3)]
    for i, run in enumerate(scored):
        for k in range(5 + i):
            f.AnswerFactory(run=run, qid=f"q-{k}", correct=k % (i + 2) != 0)
    empty = f.RunFactory(run_id="empty")
    with django_assert_num_queries(1):
        scores = run_scores([*scored, empty])
    assert [(scores[r.pk].right, scores[r.pk].wrong) for r in scored] == [(2, 3), (4, 2), (5, 2)]
    for run in scored:
        assert scores[run.pk].score() == run_grades(run).score()
        assert scores[run.pk].n_scored == run_grades(run).n_scored
    assert scores[empty.pk] == HarnessScore(0, 0)
    assert scores[empty.pk].score() is None


@pytest.mark.django_db
def test_a_run_the_harness_left_unscored_is_graded_in_full():
    run = f.RunFactory(run_id="human-graded")
    f.AnswerFactory(run=run, qid="q-1", correct=True)
    f.AnswerFactory(run=run, qid="q-2", correct=None, final_verdict="incorrect")
    f.AnswerFactory(run=run, qid="q-3", correct=None, final_verdict="")
    got = run_scores([run])[run.pk]
    assert (got.score(), got.n_scored) == (0.5, 2)
    assert got == run_grades(run)
