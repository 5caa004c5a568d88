import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def settings_import(env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
                           "from django.conf import settings; print(settings.SECRET_KEY[:4], settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)"],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def test_production_mode_refuses_to_start_without_a_secret_key(tmp_path):
    result = settings_import({"DEBUG": "false", "EVALAPP_VAR_DIR": str(tmp_path)})
    assert result.returncode != 0 and "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_embedded_defaults_need_no_service(tmp_path):
    env = {"EVALAPP_VAR_DIR": str(tmp_path)}
    for key in ("DATABASE_URL", "CELERY_BROKER_URL"):
        os.environ.get(key) and env.update({key: ""})
    result = subprocess.run([sys.executable, "-c", "import os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
                             "[os.environ.pop(k, None) for k in ('DATABASE_URL','CELERY_BROKER_URL')]; "
                             "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)"],
                            cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "filesystem://"]
    assert (tmp_path / "secret_key").exists() and (tmp_path / "broker" / "in").is_dir()


def test_database_and_broker_come_from_the_environment(tmp_path):
    result = settings_import({"EVALAPP_VAR_DIR": str(tmp_path), "SECRET_KEY": "abcd-from-env",
                              "DATABASE_URL": "postgres://u@db.example:5432/x", "CELERY_BROKER_URL": "redis://r:6379/0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["abcd", "django.db.backends.postgresql", "redis://r:6379/0"]
