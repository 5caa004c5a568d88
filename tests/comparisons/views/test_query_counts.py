"""The comparisons' pages and API lists issue a number of SQL statements that does not grow with the runs
(points) they show: each is fetched over a small and a larger world under the same bound."""

from datetime import timedelta

import pytest

from annotation.models import PublishedFigure
from tests import factories as f

SIZES = [3, 12]
QIDS = [f"q-{k:03d}" for k in range(6)]


def runs_world(n: int):
    """A dataset in two versions (the second adds a question) and n harness-scored runs of two systems on
    each, with the same pinned fields, each run's score shown once; an engineer to read them."""
    engineer = f.UserFactory(username="eng", roles=("engineer",))
    dataset = f.DatasetFactory.create(name="grown")
    v1 = f.version(dataset, [f.record(q) for q in QIDS[:-1]])
    v2 = f.version(dataset, [f.record(q) for q in QIDS], parent=v1)
    for i in range(n):
        for version in (v1, v2):
            run = f.RunFactory.create(
                run_id=f"run-{version.number}-{i}",
                system=f"sys-{i % 2}",
                dataset=dataset,
                dataset_version=version,
                dataset_hash=version.dataset_hash,
                evaluator_config_hash="sha256:cfg",
                started_at=f.WHEN + timedelta(days=version.number * 100 + i),
            )
            for k, qid in enumerate(QIDS[: version.examples]):
                f.AnswerFactory(run=run, qid=qid, correct=(k + i) % 3 != 0)
            PublishedFigure.objects.create(
                run=run, score=0.5, n=version.examples, dataset_hash=version.dataset_hash, shown_to="board",
                shown_at=run.started_at,
            )  # fmt: skip
    return engineer


PAGES = {
    "dataset history page": "/datasets/grown/history/",
    "dataset history API": "/api/datasets/grown/history/",
    "series page": "/series/?dataset=grown",
    "series API": "/api/series/?dataset=grown",
    "runs page": "/runs/",
    "run page": "/runs/run-2-0/",
    "run failures API": "/api/runs/run-2-0/failures/",
    "published API": "/api/published/",
}
# Statements each page may issue, at every size.
BOUNDS = {
    "dataset history page": 38,
    "dataset history API": 31,
    # The series carries the dataset's published figures: the figures and their corrections, the versions, the
    # systems' runs and one diff per (published version, latest version), however many figures rest on it.
    "series page": 20,
    "series API": 18,
    "runs page": 7,  # the page of runs and their count
    "run page": 19,
    "run failures API": 9,
    "published API": 10,
}


@pytest.mark.django_db
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_statements_do_not_grow_with_the_runs(name, n, client, fetch_within):
    client.force_login(runs_world(n))
    fetch_within(PAGES[name], BOUNDS[name])
