import pytest

from calibration import tasks
from calibration.models import CalibrationRun
from calibration.services.calibration import calibration_start, pending_item_ids
from tests.calibration.world import load_world
from tests.judge_server import JudgeServer


@pytest.fixture
def world(db, tmp_path):
    """60 labelled answers of run-a on dataset `support`."""
    return load_world(tmp_path / "world")


@pytest.fixture
def eager():
    """Tasks sent by the code under test run in this process (tests/celery has the real workers)."""
    from evalapp.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


@pytest.fixture
def judge_server():
    with JudgeServer() as server:
        yield server


@pytest.fixture
def run_inline(django_capture_on_commit_callbacks):
    """Start a calibration and run its chunk tasks in this process, as a worker would (no broker)."""

    def run(version, *, dataset="support", size=30, seed=0, chunk_size=10, **kwargs) -> CalibrationRun:
        with django_capture_on_commit_callbacks(execute=False):
            run, _ = calibration_start(
                judge_version_id=version.pk, dataset_name=dataset, size=size, seed=seed, chunk_size=chunk_size, **kwargs
            )
        pending = pending_item_ids(run)
        for start in range(0, len(pending), chunk_size):
            tasks.judge_chunk.apply(args=(run.pk, pending[start : start + chunk_size]), throw=True)
        run.refresh_from_db()
        return run

    return run
