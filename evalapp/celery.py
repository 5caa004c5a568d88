"""The Celery application; workers start with `celery -A evalapp worker`."""

import os
import uuid
from collections.abc import Callable
from time import monotonic
from typing import Any, cast

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, task_retry, worker_init
from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.json import dumps

from evalapp import logs, metrics

# kombu's JSON (it writes datetimes, UUIDs and decimals as its loads reads them back); kombu has no annotations.
_dumps = cast(Callable[[object], str], dumps)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")


class _WholeMessageChannel(filesystem.Channel):
    # kombu's own classes name the argument differently (payload here, message in the abstract channel).
    def _put(self, queue: str, payload: object, **kwargs: Any) -> None:  # type: ignore[override]
        """As kombu's, except that a message appears whole: written under a name no worker takes (the
        `.part` suffix), then renamed. kombu writes in place, and a worker that lists the folder meanwhile
        takes the empty file, fails to decode it and stops, holding its unacknowledged tasks."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        try:
            with open(final + ".part", "wb", buffering=0) as f:
                f.write(_dumps(payload).encode("utf-8"))
            os.replace(final + ".part", final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class FilesystemTransport(filesystem.Transport):
    """The embedded filesystem broker (a laptop needs no service), with messages that appear whole."""

    Channel = _WholeMessageChannel


# Every process that talks to the broker (web, commands, workers, beat) imports this module first.
TRANSPORT_ALIASES["filesystem"] = "evalapp.celery:FilesystemTransport"

# Task counts and durations for /metrics (evalapp.metrics), in whichever process runs the task.
task_prerun.connect(metrics.task_started, weak=False)
task_postrun.connect(metrics.task_finished, weak=False)
task_retry.connect(metrics.task_retried, weak=False)
worker_init.connect(metrics.serve_worker_metrics, weak=False)
# The publishing request's id and user ride with the task; a task's log lines carry them, its id and its run.
before_task_publish.connect(logs.task_headers, weak=False)
task_prerun.connect(logs.task_started, weak=False)
task_postrun.connect(logs.task_finished, weak=False)

app = Celery("evalapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
