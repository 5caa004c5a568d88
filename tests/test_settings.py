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


def celery_settings(tmp_path, **env_extra):
    """The Celery settings a process gets from this environment (a fresh interpreter, as a worker would)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CELERY_", "CALIBRATION_")) and k not in ("SECRET_KEY", "DEBUG")}
    env.update({"EVALAPP_VAR_DIR": str(tmp_path), **env_extra})
    code = ("import json, os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
            "from django.conf import settings as s; print(json.dumps({'options': getattr(s, 'CELERY_BROKER_TRANSPORT_OPTIONS', {}), "
            "'limit': s.CELERY_TASK_TIME_LIMIT, 'beat': s.CELERY_BEAT_SCHEDULE, 'beat_file': s.CELERY_BEAT_SCHEDULE_FILENAME}))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)


def test_redis_visibility_timeout_outlasts_the_longest_task(tmp_path):
    import json

    default = celery_settings(tmp_path, CELERY_BROKER_URL="redis://r:6379/0")
    assert default.returncode == 0, default.stderr
    got = json.loads(default.stdout)
    # Twice the time limit (a prefetched task waits behind one, then runs) + the stall check's ETA + a minute.
    assert got["options"] == {"visibility_timeout": 2 * 360 + 120 + 60} and got["limit"] == 360
    longer = json.loads(celery_settings(tmp_path, CELERY_BROKER_URL="rediss://r:6380/1", CELERY_TASK_TIME_LIMIT="1000",
                                        CELERY_TASK_SOFT_TIME_LIMIT="900").stdout)
    assert longer["options"]["visibility_timeout"] == 2 * 1000 + 120 + 60 > longer["limit"]
    embedded = json.loads(celery_settings(tmp_path).stdout)
    assert "visibility_timeout" not in embedded["options"]  # the filesystem broker has no such thing
    bad = celery_settings(tmp_path, CELERY_TASK_TIME_LIMIT="100", CELERY_TASK_SOFT_TIME_LIMIT="100")
    assert bad.returncode != 0 and "CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT" in bad.stderr


def test_beat_sweeps_for_stalled_runs_on_a_configurable_period(tmp_path):
    import json

    got = json.loads(celery_settings(tmp_path).stdout)
    assert got["beat"] == {"resume-stalled-runs": {"task": "calibration.sweep_stalled", "schedule": 30.0,
                                                   "options": {"expires": 30.0}}}
    assert got["beat_file"] == str(tmp_path / "celerybeat-schedule")
    fast = json.loads(celery_settings(tmp_path, CALIBRATION_SWEEP_SECONDS="5").stdout)
    assert fast["beat"]["resume-stalled-runs"]["schedule"] == 5.0
