"""compose.yaml: valid where Docker's compose plugin exists, and every service's command, started here as a
plain process against the local Redis (a file SQLite database stands in for the db service), brings up a web
app whose /readyz finds the database, the broker and a worker."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.celery.conftest import REDIS_DB, redis_available, redis_pass_only

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
APP_SERVICES = ("migrate", "web", "worker-calibration", "worker-grading", "beat")


def test_compose_names_every_service_on_the_one_image_with_the_deployment_environment():
    services = COMPOSE["services"]
    assert set(services) == {"db", "redis", *APP_SERVICES}
    for name in APP_SERVICES:
        service = services[name]
        assert (service["build"], service["image"], service["env_file"]) == (".", "evalapp:latest", ".env"), name
        assert set(service["environment"]) == {"DATABASE_URL", "CELERY_BROKER_URL"}, name
    queues = {
        name: services[name]["command"][services[name]["command"].index("-Q") + 1].split(",")
        for name in ("worker-calibration", "worker-grading")
    }
    # Between them the workers take every queue the settings route work to.
    from django.conf import settings

    assert sorted(queues["worker-calibration"] + queues["worker-grading"]) == sorted(
        q.name for q in settings.CELERY_TASK_QUEUES
    )
    assert services["migrate"]["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert services["web"]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


@pytest.mark.skipif(
    shutil.which("docker") is None
    or subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0,
    reason="Docker's compose plugin is not installed here",
)
def test_docker_compose_accepts_the_file(tmp_path):
    shutil.copy(REPO / ".env.example", tmp_path / ".env")
    shutil.copy(REPO / "compose.yaml", tmp_path / "compose.yaml")
    done = subprocess.run(["docker", "compose", "config", "-q"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=15) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.mark.celery_worker
@redis_pass_only
def test_the_services_commands_run_as_processes(tmp_path):
    if not redis_available():
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    import redis

    redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB).flushdb()
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "TEST_DATABASE_NAME")},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
        "EVALAPP_VAR_DIR": str(tmp_path / "var"),
        "DEBUG": "false",
        "SECRET_KEY": "compose-test-" + "k" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "READYZ_TIMEOUT": "2",
    }
    env.pop("CELERY_RESULT_BACKEND", None)

    def command(name: str) -> list[str]:
        args = list(COMPOSE["services"][name]["command"])
        if name == "web":
            args[args.index("--bind") + 1] = f"127.0.0.1:{port}"
            args[args.index("--workers") + 1] = "2"
        if name.startswith("worker"):
            args[args.index("--concurrency") + 1] = "1"
        if name == "beat":
            args[args.index("--schedule") + 1] = str(tmp_path / "beat-schedule")
        return args

    migrated = subprocess.run(command("migrate"), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    procs = {}
    try:
        for name in ("web", "worker-calibration", "worker-grading", "beat"):
            log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115  (closed with the process below)
            procs[name] = (
                subprocess.Popen(
                    command(name), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                ),
                log,
            )
        deadline = time.monotonic() + 120
        status, body = 0, dict[str, str]()
        while time.monotonic() < deadline:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/readyz")
            except (OSError, json.JSONDecodeError):  # not listening yet, or still booting
                status = 0
            if status == 200:
                break
            time.sleep(0.5)
        logs = "".join(f"\n--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(tmp_path.glob("*.log")))
        assert status == 200, (body, logs)
        assert {k: body[k] for k in ("database", "broker", "worker")} == dict.fromkeys(
            ("database", "broker", "worker"), "ok"
        )
        assert _get(f"http://127.0.0.1:{port}/healthz") == (200, {"status": "ok"})
        assert all(p.poll() is None for p, _ in procs.values()), logs
    finally:
        for p, _log in procs.values():
            if p.poll() is None:
                p.terminate()
        for p, log in procs.values():
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
            log.close()
    assert "Starting" in (tmp_path / "beat.log").read_text()
