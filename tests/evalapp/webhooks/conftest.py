import pytest

from tests.evalapp.webhooks.receiver import Receiver

SECRET = "whsec-test"


@pytest.fixture
def eager():
    """Tasks sent by the code under test run in this process (tests/celery has the real worker)."""
    from evalapp.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


@pytest.fixture
def receiver():
    with Receiver(SECRET) as r:
        yield r
