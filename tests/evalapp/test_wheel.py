"""The wheel: `pip wheel .` holds the templates, the static files and the demo data, and once installed (away
from any checkout) the `evalapp` command runs manage.py's commands and serves the pages from its own copy."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.celery.conftest import embedded_pass_only

REPO = Path(__file__).resolve().parents[2]
# Building and installing the wheel does not depend on the suite's database or broker: once per CI run.
pytestmark = embedded_pass_only


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from this checkout and installed into a folder of its own (its dependencies come from
    the running virtualenv)."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (root / "dist").glob("evalapp-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(root / "site"), str(wheel)],
        check=True,
        capture_output=True,
    )
    return wheel, root


def test_the_wheel_holds_every_template_static_file_and_the_demo(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, prefix in (("templates", "evalapp/site/templates/"), ("static", "evalapp/site/static/")):
        shipped = {p.relative_to(REPO / folder).as_posix() for p in (REPO / folder).rglob("*") if p.is_file()}
        assert shipped and {prefix + name for name in shipped} <= names, folder
    assert {f"annotation/demo/{n}.jsonl" for n in ("corpus", "questions", "labels")} <= names


def test_the_evalapp_command_runs_from_the_installed_copy_away_from_the_checkout(installed, tmp_path):
    _, root = installed
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(PYTHONPATH=str(root / "site"), EVALAPP_VAR_DIR=str(tmp_path / "var"))

    def evalapp(*args):
        done = subprocess.run(
            [sys.executable, str(root / "site" / "bin" / "evalapp"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    evalapp("migrate", "-v", "0")
    site = root / "site" / "evalapp" / "site"
    assert evalapp("findstatic", "css/app.css").splitlines()[1].strip() == str(site / "static" / "css" / "app.css")
    shown = evalapp(
        "shell",
        "-c",
        "import evalapp; from django.template.loader import get_template; from django.test import Client; "
        "print(evalapp.__file__); print(get_template('registration/login.html').origin.name); "
        "print(Client().get('/login/').status_code)",
    ).splitlines()
    assert shown[-3:] == [
        str(root / "site" / "evalapp" / "__init__.py"),
        str(site / "templates" / "registration" / "login.html"),
        "200",
    ]
    # The demo data the demo loader reads is in the installed package, not in the checkout.
    demo = evalapp("shell", "-c", "from annotation.services.demo import DEMO_DIR; print(DEMO_DIR)").splitlines()[-1]
    assert demo == str(root / "site" / "annotation" / "demo")
