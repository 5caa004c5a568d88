"""Grading runs at scale: chunks sized to the judge, statements per chunk that do not grow with it, and a
redelivered chunk that writes nothing twice."""

import pytest

from calibration import tasks
from calibration.backends import JudgeResult
from calibration.backends.runner import Outcome
from calibration.models import GradedAnswer, GradingRun
from calibration.services.grading import GRADING_RUNS, grading_chunk_size, grading_pending_answer_ids, grading_start
from calibration.services.judges import judge_version_create
from tests.calibration.world import load_world


def version(backend="span", **params):
    return judge_version_create(judge_name=f"{backend}-judge", backend=backend, min_n=10, threshold=0.0, params=params)[
        0
    ]


def started(django_capture_on_commit_callbacks, judge, **kwargs) -> GradingRun:
    with django_capture_on_commit_callbacks(execute=False):
        return grading_start(judge_version_id=judge.pk, run_id="run-a", force=True, reason="test", **kwargs)


@pytest.mark.parametrize(
    ("params", "size"),
    [
        ({}, 128),  # the default concurrency, 8: sixteen rounds of 8
        ({"concurrency": 16}, 256),
        ({"concurrency": 1}, 50),  # at least DEFAULT_CHUNK
        ({"concurrency": 3}, 51),  # a whole number of rounds
        ({"concurrency": 16, "rate_limit": 2}, 20),  # ten seconds of the limit
        ({"concurrency": 16, "rate_limit": 0.5}, 16),  # never under one round
        ({"concurrency": 16, "rate_limit": 1000}, 256),
    ],
)
def test_without_a_chunk_size_a_grading_sizes_its_chunks_to_the_judge(
    world, django_capture_on_commit_callbacks, params, size
):
    judge = version(**params)
    assert grading_chunk_size(params=judge.params) == size
    assert started(django_capture_on_commit_callbacks, judge).chunk_size == size


def test_a_chunk_size_given_is_kept(world, django_capture_on_commit_callbacks):
    assert started(django_capture_on_commit_callbacks, version(concurrency=16), chunk_size=30).chunk_size == 30


def test_a_bad_chunk_size_is_refused_and_nothing_is_written(world, django_capture_on_commit_callbacks):
    from evalapp.errors import ServiceError

    judge = version()
    with pytest.raises(ServiceError) as refused:
        started(django_capture_on_commit_callbacks, judge, chunk_size=0)
    assert [(p.field, p.message) for p in refused.value.problems] == [("chunk_size", "must be from 1 to 10000, not 0")]
    assert GradingRun.objects.count() == 0


@pytest.mark.parametrize("n", [10, 120])
def test_a_chunk_costs_the_same_statements_whatever_its_size(
    n, db, tmp_path, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    """Reads, the run's start, the verdicts (set-based, one batch) and the close: a fixed number of statements
    at 10 answers as at 120."""
    load_world(tmp_path / "world", n=n)
    grading = started(django_capture_on_commit_callbacks, version(), chunk_size=n)
    ids = grading_pending_answer_ids(grading)
    # 23, and one more: whether a webhook listens for grading.finished.
    with django_assert_max_num_queries(24):
        tasks.grade_chunk.apply(args=(grading.pk, ids), throw=True)
    grading.refresh_from_db()
    assert (grading.status, GradedAnswer.objects.filter(grading=grading).count()) == ("done", n)


def test_a_redelivered_chunk_writes_each_answer_once(world, django_capture_on_commit_callbacks):
    """The worker died after writing part of a chunk (one answer as an error), and the broker hands the
    chunk over again, twice: the answers written stay as they were, the error is judged again, the rest
    once; one verdict per answer."""
    grading = started(django_capture_on_commit_callbacks, version(), chunk_size=60)
    ids = grading_pending_answer_ids(grading)
    GRADING_RUNS.record(
        grading,
        [Outcome(k, JudgeResult("incorrect", raw_output="kept")) for k in ids[:20]]
        + [Outcome(ids[20], None, "HTTP 500", 4, True)],
    )
    kept = list(GradedAnswer.objects.filter(grading=grading, answer_id__in=ids[:20]).values_list("pk", "verdict"))
    assert tasks.grade_chunk.apply(args=(grading.pk, ids), throw=True).get() == {
        "judged": 40,
        "errors": 0,
        "transient": 0,
    }
    grading.refresh_from_db()
    assert grading.status == "done"
    again = tasks.grade_chunk.apply(args=(grading.pk, ids), throw=True).get()
    assert again == {"skipped": 60, "reason": "run is not active"}
    rows = GradedAnswer.objects.filter(grading=grading)
    assert (rows.count(), rows.values("answer").distinct().count()) == (60, 60)
    assert list(rows.filter(answer_id__in=ids[:20]).values_list("pk", "verdict")) == kept
    assert rows.filter(verdict="error").count() == 0
    assert rows.get(answer_id=ids[20]).raw_output != "HTTP 500"
