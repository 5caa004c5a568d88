"""Real Celery workers in subprocesses, on the embedded filesystem broker and on Redis.

The worker is another process, so it cannot see pytest-django's in-memory test database. These tests
therefore build their own world in a file SQLite database under tmp_path (migrated and loaded through
the real commands) and drive everything through `manage.py` subprocesses and the worker, as a user
would. No pytest-django database fixture is involved.
"""

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.calibration.world import write_world
from tests.judge_server import JudgeServer

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CELERY = str(Path(sys.executable).with_name("celery"))
# Under pytest-xdist (gw0, gw1, …) each test process takes its own Redis database (13, 11, 9, 7) and its own
# PostgreSQL database below: two stacks flushing one database would take each other's tasks.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
XDIST_INDEX = int(XDIST_WORKER.removeprefix("gw") or 0)
REDIS_DB = int(os.environ.get("CELERY_TEST_REDIS_DB", "13")) - 2 * XDIST_INDEX


def redis_available() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


# Tests whose setup does not depend on the suite's database or broker (they bring their own) run once in CI:
# those on Redis in the PostgreSQL + Redis pass, the rest in the embedded pass (`stack` skips the other kind).
ON_REDIS_PASS = os.environ.get("CELERY_BROKER_URL", "").startswith("redis://")
redis_pass_only = pytest.mark.skipif(
    not ON_REDIS_PASS, reason="runs in the suite's Redis pass (CELERY_BROKER_URL=redis://…)"
)
embedded_pass_only = pytest.mark.skipif(
    ON_REDIS_PASS, reason="runs in the suite's embedded pass (no CELERY_BROKER_URL)"
)


class Stack:
    """A file database, a broker, a judge server and workers, all owned by one test."""

    def __init__(self, tmp: Path, broker: str, server: JudgeServer, database_url: str | None = None):
        self.tmp = tmp
        self.db = tmp / "db.sqlite3"
        self.database_url = database_url
        self.server = server
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evalapp.settings.base",
            "DATABASE_URL": database_url or f"sqlite:///{self.db}",
            "EVALAPP_VAR_DIR": str(tmp / "var"),
            "CELERY_BROKER_URL": broker,
            "CALIBRATION_STALL_SECONDS": "120",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
        self.env.pop("CELERY_RESULT_BACKEND", None)
        self.workers: list[subprocess.Popen] = []

    def manage(self, *args, check=True, timeout=600) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [PYTHON, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and done.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def load_world(self, n: int) -> dict:
        files = write_world(self.tmp / "world", n=n)
        self.manage("migrate", "-v0")
        self.manage("import_questions", str(files["questions"]), "--dataset", "support")
        self.manage("import_run", str(files["run"]))
        self.manage("import_labels", str(files["labels"]))
        return files

    def judge_version(self, **params) -> int:
        args = [
            "create_judge_version",
            "--judge",
            "llm",
            "--backend",
            "openai",
            "--model",
            "judge-1",
            "--min-n",
            "10",
            "--threshold",
            "0.3",
            "--param",
            f"base_url={self.server.url}",
        ]
        for k, v in params.items():
            args += ["--param", f"{k}={v}"]
        return json.loads(self.manage(*args, "--json").stdout)["judge_version"]

    def start_worker(
        self,
        name: str,
        *,
        stall_seconds: int | None = None,
        processes: int = 2,
        beat: bool = False,
        sweep_seconds: float | None = None,
        pool: str = "prefork",
        env: dict[str, str] | None = None,
        queues: str | None = None,
    ) -> subprocess.Popen:
        """A worker (with an embedded beat when asked, as `make run` starts it), ready to take tasks: `processes`
        prefork children, or with pool="threads" one process running that many tasks at once."""
        env = {**self.env, **(env or {})}
        if stall_seconds is not None:
            env["CALIBRATION_STALL_SECONDS"] = str(stall_seconds)
        if sweep_seconds is not None:
            env["CALIBRATION_SWEEP_SECONDS"] = str(sweep_seconds)
        log = open(self.tmp / f"worker-{name}.log", "a")  # noqa: SIM115  (the worker writes to it until stop() closes it)
        args = [
            CELERY,
            "-A",
            "evalapp",
            "worker",
            "--loglevel=INFO",
            f"--concurrency={processes}",
            f"--pool={pool}",
            "-n",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if beat:
            args += ["--beat", "--schedule", str(self.tmp / f"beat-{name}")]
        if queues:
            args += ["-Q", queues]
        worker = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(worker)
        deadline = time.monotonic() + 180  # generous: CI machines and shared laptops are slow under load
        while time.monotonic() < deadline:
            if "ready." in (self.tmp / f"worker-{name}.log").read_text():
                return worker
            if worker.poll() is not None:
                raise AssertionError("the worker exited:\n" + (self.tmp / f"worker-{name}.log").read_text())
            time.sleep(0.2)
        raise AssertionError("the worker did not start in 180 s")

    def chunks_held(self, name: str) -> int:
        """Chunk tasks the worker has received and not finished (from its log)."""
        text = (self.tmp / f"worker-{name}.log").read_text()
        received = re.findall(r"Task calibration\.judge_chunk\[([\w-]+)\] received", text)
        finished = set(re.findall(r"Task calibration\.judge_chunk\[([\w-]+)\] (?:succeeded|raised|retry)", text))
        return len(set(received) - finished)

    def tasks_received(self, name: str, task: str) -> int:
        """Distinct tasks of this name the worker has received (a retried task counts once)."""
        text = (self.tmp / f"worker-{name}.log").read_text()
        return len(set(re.findall(rf"Task {re.escape(task)}\[([\w-]+)\] received", text)))

    def logs(self) -> str:
        """The tail of every worker log, for assertion messages."""
        return "".join(
            f"\n--- {p.name}\n" + "\n".join(p.read_text().splitlines()[-40:])
            for p in sorted(self.tmp.glob("worker-*.log"))
        )

    def kill(self, worker: subprocess.Popen) -> None:
        """SIGKILL the worker and its pool children (its own process group): a crash, not a shutdown."""
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)

    def stop_all(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGQUIT)  # cold shutdown: the test is over
                try:
                    worker.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(worker.pid, signal.SIGKILL)
                    worker.wait(timeout=10)

    def sql(self, query: str, *args):
        if self.database_url:
            import psycopg

            with psycopg.connect(self.database_url, autocommit=True) as conn:
                return [tuple(r) for r in conn.execute(query.replace("?", "%s"), args).fetchall()]
        with sqlite3.connect(self.db, timeout=30) as conn:
            return conn.execute(query, args).fetchall()


POSTGRES_ADMIN = os.environ.get("CELERY_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")
# Its own name per checkout when several test runs share one PostgreSQL server.
POSTGRES_DB = os.environ.get("CELERY_TEST_POSTGRES_DB", "test_evalapp_calibration_worker") + (
    f"_{XDIST_WORKER}" if XDIST_WORKER else ""
)


def postgres_database() -> str:
    """A fresh PostgreSQL database for the worker test (dropped and created), or skip."""
    try:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN, autocommit=True, connect_timeout=2) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{POSTGRES_DB}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{POSTGRES_DB}"')
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"PostgreSQL is not available at {POSTGRES_ADMIN}: {exc}")
    return POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + POSTGRES_DB


@pytest.fixture(params=["filesystem", "redis"])
def stack(request, tmp_path):
    """A stack on the embedded filesystem broker, on Redis, or on Redis with PostgreSQL ("redis+postgres").

    A stack brings its own database and broker, whatever the suite's, so each kind runs in one of CI's two
    passes (each real-worker test takes half a minute or more): the Redis kinds in the Redis pass, the
    filesystem broker in the embedded one."""
    if request.param.startswith("redis") and not ON_REDIS_PASS:
        pytest.skip("a Redis stack runs in the suite's Redis pass (CELERY_BROKER_URL=redis://…)")
    if request.param == "filesystem" and ON_REDIS_PASS:
        pytest.skip("the filesystem broker's stack runs in the suite's embedded pass (no CELERY_BROKER_URL)")
    database_url = None
    if request.param.startswith("redis"):
        if not redis_available():
            pytest.skip("Redis is not running on 127.0.0.1:6379")
        import redis

        redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB).flushdb()  # this test run's own database number
        broker = f"redis://127.0.0.1:6379/{REDIS_DB}"
        if request.param == "redis+postgres":
            database_url = postgres_database()
    else:
        broker = "filesystem://"
    with JudgeServer() as server:
        s = Stack(tmp_path, broker, server, database_url)
        s.kind = request.param
        try:
            yield s
        finally:
            s.stop_all()
            if database_url:
                import psycopg

                with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{POSTGRES_DB}" WITH (FORCE)')
