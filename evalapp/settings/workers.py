"""Celery settings, read by base.py: the broker (a filesystem one under var/ on a laptop), the queues and
routes, beat's schedule, acknowledgement, prefetch and time limits, and the stall and webhook sweeps' timing."""

from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from evalapp.env import VAR_DIR, env

# Celery: a filesystem broker under var/ needs no service on a laptop; redis:// in CI and production.
_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "in"),
        "data_folder_out": str(_BROKER_DIR / "in"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
        # The worker lists the folder this often; at the default 1 s every chunk of a calibration waited
        # up to a second to be picked up, more than judging it took.
        "polling_interval": env.float("CELERY_BROKER_POLLING_INTERVAL", default=0.1),
    }
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
if CELERY_RESULT_BACKEND is None and CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Calibration runs fan in with a chord, which needs a result backend; Redis joins chords natively.
    CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = env.int("CELERY_RESULT_EXPIRES", default=86400)
# A queued or running calibration or grading with no heartbeat for this long has lost its worker and is
# resumed by the stall sweep. Live tasks beat every second; a chunk waiting out a retry's backoff (at most
# a minute) does not, so keep this above 60 s wherever the judge can be flaky.
CALIBRATION_STALL_SECONDS = env.int("CALIBRATION_STALL_SECONDS", default=120)
# How often beat runs the stall sweep (`celery -A evalapp worker --beat`, or `celery -A evalapp beat`).
CALIBRATION_SWEEP_SECONDS = env.float("CALIBRATION_SWEEP_SECONDS", default=30)
# Webhooks (README "Webhooks"): attempts before a delivery fails for good, the first retry's wait (doubled at
# each attempt), the receiver's time to answer, and how often beat sweeps lost deliveries and watches gates.
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=8)
WEBHOOK_BACKOFF_SECONDS = env.float("WEBHOOK_BACKOFF_SECONDS", default=10)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10)
WEBHOOK_SWEEP_SECONDS = env.float("WEBHOOK_SWEEP_SECONDS", default=60)
WEBHOOK_GATE_WATCH_SECONDS = env.float("WEBHOOK_GATE_WATCH_SECONDS", default=60)
CELERY_BEAT_SCHEDULE = {
    "resume-stalled-runs": {
        "task": "calibration.sweep_stalled",
        "schedule": CALIBRATION_SWEEP_SECONDS,
        # A sweep that waited longer than a period (no worker up) is dropped: the next one does its work.
        "options": {"expires": CALIBRATION_SWEEP_SECONDS},
    },
    # Webhook deliveries whose task was lost with a worker are sent again (evalapp.webhooks.services).
    "sweep-webhooks": {
        "task": "webhooks.sweep_webhooks",
        "schedule": WEBHOOK_SWEEP_SECONDS,
        "options": {"expires": WEBHOOK_SWEEP_SECONDS},
    },
    # A gate is computed on read: this notices the ones that moved (labels changed under a sample, another
    # served model) and emits gate.status_changed; a new measurement is noticed at once by calibration_close.
    "watch-gates": {
        "task": "calibration.watch_gates",
        "schedule": WEBHOOK_GATE_WATCH_SECONDS,
        "options": {"expires": WEBHOOK_GATE_WATCH_SECONDS},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Each kind of work on a queue of its own, so a 100,000-answer grading cannot starve a 100-item calibration:
# run a worker per queue (`celery -A evalapp worker -Q grading`); a worker started without -Q takes every
# queue listed here, as `make run`'s does. Imports go to their own queue as well.
# Each queue on an exchange of its own with its name as the routing key: a bare Queue(name) is bound to the
# default exchange with the key "celery", so a message for one queue would be delivered to every queue.
CELERY_TASK_QUEUES = [
    Queue(name, Exchange(name), routing_key=name)  # type: ignore[no-untyped-call]
    for name in ("celery", "calibration", "grading", "imports", "housekeeping")
]
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "calibration.dispatch_run": {"queue": "calibration"},
    "calibration.judge_chunk": {"queue": "calibration"},
    "calibration.close_run": {"queue": "calibration"},
    "calibration.grade_run": {"queue": "grading"},
    "calibration.grade_chunk": {"queue": "grading"},
    "calibration.close_grading": {"queue": "grading"},
    "calibration.sweep_stalled": {"queue": "housekeeping"},
    "calibration.watch_gates": {"queue": "housekeeping"},
    "webhooks.deliver_webhook": {"queue": "housekeeping"},
    "webhooks.sweep_webhooks": {"queue": "housekeeping"},
    "annotation.run_import_job": {"queue": "imports"},
}
# A worker child is replaced after this many tasks: what a long-lived process leaks, it gives back.
CELERY_WORKER_MAX_TASKS_PER_CHILD = env.int("CELERY_WORKER_MAX_TASKS_PER_CHILD", default=1000)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# No task may run longer than these (tasks.limits() caps each task's own); the longest is the time limit.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=360)
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT.")
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Redis hands a message that was taken but not acknowledged to another worker after the visibility
    # timeout; with acks_late that is every task until it ends. It must outlast the longest wait for an ack:
    # a prefetched message waits behind a running task and then runs itself (twice the time limit), and a
    # message with an ETA (a retry's backoff, the stall check a stall window later) waits in the worker first.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": 2 * CELERY_TASK_TIME_LIMIT + max(60, CALIBRATION_STALL_SECONDS) + 60,
    }
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
