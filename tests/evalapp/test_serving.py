"""DEBUG is off unless asked for; with it off, a process that serves (the WSGI app, runserver, a Celery
worker or beat) needs SECRET_KEY and ALLOWED_HOSTS, and a management command runs with the key generated
once in var/secret_key."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from evalapp import env as evalapp_env

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = (
    "import os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; from django.conf import settings as s; "
)
CELERY = str(Path(sys.executable).with_name("celery"))


def bare_env(tmp_path, **extra):
    """This environment without what the production checks look at, as a fresh machine has it."""
    env = {
        k: v
        for k, v in os.environ.items()
        # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in this process; a deployment never has it.
        if k not in ("DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    env.update({"EVALAPP_VAR_DIR": str(tmp_path), **extra})
    return env


def run(args, env):
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize(
    ("argv", "serves"),
    [
        (["manage.py", "runserver"], True),
        (["manage.py", "runserver", "0.0.0.0:8000", "--noreload"], True),
        (["/usr/bin/evalapp", "runserver"], True),
        (["/x/evalapp/__main__.py", "runserver", "127.0.0.1:9"], True),
        (["/venv/bin/celery", "-A", "evalapp", "worker", "-Q", "grading"], True),
        (["/venv/bin/celery", "-A", "evalapp", "beat"], True),
        (["/site/celery/__main__.py", "-A", "evalapp", "worker", "--beat"], True),
        (["manage.py", "migrate"], False),
        (["manage.py", "check", "--deploy"], False),
        (["manage.py", "shell", "-c", "runserver"], False),
        (["/venv/bin/evalapp", "import_questions", "runserver.jsonl"], False),
        (["/venv/bin/celery", "-A", "evalapp", "inspect", "ping"], False),
        (["/venv/bin/pytest", "tests/evalapp"], False),
        ([], False),
    ],
)
def test_which_processes_serve(argv, serves, monkeypatch):
    monkeypatch.setattr(evalapp_env, "_SERVING_WSGI", False)
    assert evalapp_env.serving(argv) is serves


def test_the_wsgi_module_marks_its_process_as_serving(monkeypatch):
    monkeypatch.setattr(evalapp_env, "_SERVING_WSGI", False)
    evalapp_env.mark_serving()
    assert evalapp_env.serving(["/venv/bin/gunicorn", "evalapp.wsgi"]) is True


def test_debug_is_off_unless_asked_for(tmp_path):
    code = SETTINGS + "print(s.DEBUG, s.SECURE_SSL_REDIRECT)"
    assert run([sys.executable, "-c", code], bare_env(tmp_path)).stdout.split() == ["False", "True"]
    assert run([sys.executable, "-c", code], bare_env(tmp_path, DEBUG="true")).stdout.split() == ["True", "False"]


def test_a_management_command_runs_with_a_generated_key_kept_owner_only(tmp_path):
    code = SETTINGS + "print(s.DEBUG, s.SECRET_KEY)"
    first = run([sys.executable, "-c", code], bare_env(tmp_path))
    assert first.returncode == 0, first.stderr
    debug, key = first.stdout.split()
    path = tmp_path / "secret_key"
    assert debug == "False" and key == path.read_text() and len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = run([sys.executable, "-c", code], bare_env(tmp_path))
    assert again.stdout.split() == ["False", key]  # kept: the next command signs with the same key
    # The deployment check holds on it too: a generated key is long and random.
    checked = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], bare_env(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_given_secret_key_writes_no_file(tmp_path):
    code = SETTINGS + "print(s.SECRET_KEY)"
    done = run([sys.executable, "-c", code], bare_env(tmp_path, SECRET_KEY="given-" + "k" * 50))
    assert done.stdout.strip() == "given-" + "k" * 50 and not (tmp_path / "secret_key").exists()


def test_the_laptop_key_is_created_owner_only_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(evalapp_env, "VAR_DIR", tmp_path / "var")
    key = evalapp_env.laptop_secret_key()
    path = tmp_path / "var" / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == key
    assert evalapp_env.laptop_secret_key() == key


WSGI = [sys.executable, "-c", "import evalapp.wsgi"]
RUNSERVER = [sys.executable, "manage.py", "runserver", "--noreload", "127.0.0.1:0"]
WORKER = [CELERY, "-A", "evalapp", "worker", "--concurrency=1", "--without-gossip", "--without-mingle"]


@pytest.mark.parametrize("args", [WSGI, RUNSERVER, WORKER], ids=["wsgi", "runserver", "celery-worker"])
@pytest.mark.parametrize(
    ("given", "missing"),
    [({"ALLOWED_HOSTS": "evalapp.example.com"}, "SECRET_KEY"), ({"SECRET_KEY": "s" * 60}, "ALLOWED_HOSTS")],
)
def test_a_serving_process_refuses_to_start_without_its_key_and_hosts(tmp_path, args, given, missing):
    done = run(args, bare_env(tmp_path, DEBUG="false", **given))
    assert done.returncode != 0
    assert f"{missing} must be set when DEBUG is off" in done.stderr
    assert not (tmp_path / "secret_key").exists()  # nothing generated for a process that must be told


def test_the_wsgi_app_loads_when_told_its_key_and_hosts(tmp_path):
    code = "import evalapp.wsgi; from django.conf import settings as s; print(s.DEBUG, s.ALLOWED_HOSTS)"
    env = bare_env(tmp_path, DEBUG="false", SECRET_KEY="s" * 60, ALLOWED_HOSTS="evalapp.example.com")
    done = run([sys.executable, "-c", code], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False ['evalapp.example.com']"


@pytest.mark.parametrize(("given", "expected"), [(None, "true"), ("false", "false")])
def test_evalapp_run_turns_debug_on_unless_told_otherwise(monkeypatch, given, expected):
    """`evalapp run` is the laptop's server: DEBUG on before the settings load, for it and its children."""
    from evalapp import cli

    if given is None:
        monkeypatch.delenv("DEBUG", raising=False)
    else:
        monkeypatch.setenv("DEBUG", given)
    seen = []
    monkeypatch.setattr("django.setup", lambda: None)
    monkeypatch.setattr("django.core.management.call_command", lambda *args, **kwargs: None)

    def serve(args):
        seen.append((os.environ.get("DEBUG"), args))
        return 0

    monkeypatch.setattr("evalapp.serve.main", serve)
    assert cli.main(["run", "--port", "9"]) == 0
    assert seen == [(expected, ["--host", "127.0.0.1", "--port", "9"])]
