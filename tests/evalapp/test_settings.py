import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def settings_import(env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update(env_extra)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
            "from django.conf import settings; print(settings.SECRET_KEY[:4], settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_production_mode_refuses_to_serve_without_a_secret_key(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env.update({"DEBUG": "false", "EVALAPP_VAR_DIR": str(tmp_path), "ALLOWED_HOSTS": "evalapp.example.com"})
    result = subprocess.run(
        [sys.executable, "manage.py", "runserver", "--noreload", "127.0.0.1:0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert not (tmp_path / "secret_key").exists()


def test_embedded_defaults_need_no_service(tmp_path):
    env = {"EVALAPP_VAR_DIR": str(tmp_path)}
    for key in ("DATABASE_URL", "CELERY_BROKER_URL"):
        os.environ.get(key) and env.update({key: ""})
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
            "[os.environ.pop(k, None) for k in ('DATABASE_URL','CELERY_BROKER_URL')]; "
            "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "filesystem://localhost/"]
    assert (tmp_path / "secret_key").exists() and (tmp_path / "broker" / "in").is_dir()


def test_database_and_broker_come_from_the_environment(tmp_path):
    result = settings_import(
        {
            "EVALAPP_VAR_DIR": str(tmp_path),
            "SECRET_KEY": "abcd-from-env",
            "DATABASE_URL": "postgres://u@db.example:5432/x",
            "CELERY_BROKER_URL": "redis://r:6379/0",
        }
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["abcd", "django.db.backends.postgresql", "redis://r:6379/0"]


def celery_settings(tmp_path, **env_extra):
    """The Celery settings a process gets from this environment (a fresh interpreter, as a worker would)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CELERY_", "CALIBRATION_")) and k not in ("SECRET_KEY", "DEBUG")
    }
    env.update({"EVALAPP_VAR_DIR": str(tmp_path), **env_extra})
    code = (
        "import json, os; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
        "from django.conf import settings as s; print(json.dumps({'options': getattr(s, 'CELERY_BROKER_TRANSPORT_OPTIONS', {}), "
        "'limit': s.CELERY_TASK_TIME_LIMIT, 'beat': s.CELERY_BEAT_SCHEDULE, 'beat_file': s.CELERY_BEAT_SCHEDULE_FILENAME}))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)


def test_redis_visibility_timeout_outlasts_the_longest_task(tmp_path):
    import json

    default = celery_settings(tmp_path, CELERY_BROKER_URL="redis://r:6379/0")
    assert default.returncode == 0, default.stderr
    got = json.loads(default.stdout)
    # Twice the time limit (a prefetched task waits behind one, then runs) + the stall check's ETA + a minute.
    assert got["options"] == {"visibility_timeout": 2 * 360 + 120 + 60} and got["limit"] == 360
    longer = json.loads(
        celery_settings(
            tmp_path,
            CELERY_BROKER_URL="rediss://r:6380/1",
            CELERY_TASK_TIME_LIMIT="1000",
            CELERY_TASK_SOFT_TIME_LIMIT="900",
        ).stdout
    )
    assert longer["options"]["visibility_timeout"] == 2 * 1000 + 120 + 60 > longer["limit"]
    embedded = json.loads(celery_settings(tmp_path).stdout)
    assert "visibility_timeout" not in embedded["options"]  # the filesystem broker has no such thing
    bad = celery_settings(tmp_path, CELERY_TASK_TIME_LIMIT="100", CELERY_TASK_SOFT_TIME_LIMIT="100")
    assert bad.returncode != 0 and "CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT" in bad.stderr


def test_beat_sweeps_for_stalled_runs_on_a_configurable_period(tmp_path):
    import json

    got = json.loads(celery_settings(tmp_path).stdout)
    assert got["beat"] == {
        "resume-stalled-runs": {"task": "calibration.sweep_stalled", "schedule": 30.0, "options": {"expires": 30.0}},
        "sweep-webhooks": {"task": "webhooks.sweep_webhooks", "schedule": 60.0, "options": {"expires": 60.0}},
        "watch-gates": {"task": "calibration.watch_gates", "schedule": 60.0, "options": {"expires": 60.0}},
    }
    assert got["beat_file"] == str(tmp_path / "celerybeat-schedule")
    fast = json.loads(celery_settings(tmp_path, CALIBRATION_SWEEP_SECONDS="5").stdout)
    assert fast["beat"]["resume-stalled-runs"]["schedule"] == 5.0


def production_env(tmp_path, **extra):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECURE_", "SESSION_", "CSRF_", "JUDGE_", "AXES_", "CACHE_"))
        # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in this process; a deployment never has it.
        and k not in ("SECRET_KEY", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    env.update(
        {
            "DEBUG": "false",
            "SECRET_KEY": "k" * 10 + "-production-secret-with-enough-entropy-0123456789abcdef",
            "ALLOWED_HOSTS": "evalapp.example.com",
            "CSRF_TRUSTED_ORIGINS": "https://evalapp.example.com",
            "EVALAPP_VAR_DIR": str(tmp_path),
        }
    )
    env.update(extra)
    return env


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."
    assert "WARNING" not in result.stderr


def production_settings(tmp_path, *names, **extra):
    code = (
        "import os, json; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
        "from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {list(names)!r}}}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=production_env(tmp_path, **extra), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return __import__("json").loads(result.stdout)


def test_production_defaults_turn_on_https_hardening(tmp_path):
    assert production_settings(
        tmp_path,
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_SSL_REDIRECT",
        "SECURE_PROXY_SSL_HEADER",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_CONTENT_TYPE_NOSNIFF",
        "X_FRAME_OPTIONS",
        "SECURE_REFERRER_POLICY",
    ) == {
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_PROXY_SSL_HEADER": None,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "X_FRAME_OPTIONS": "DENY",
        "SECURE_REFERRER_POLICY": "same-origin",
    }


def test_https_settings_come_from_the_environment(tmp_path):
    assert production_settings(
        tmp_path,
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_SSL_REDIRECT",
        "SECURE_PROXY_SSL_HEADER",
        SECURE_HSTS_SECONDS="3600",
        SECURE_HSTS_PRELOAD="false",
        SECURE_SSL_REDIRECT="false",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
    ) == {
        "SECURE_HSTS_SECONDS": 3600,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
    }


def test_a_malformed_proxy_ssl_header_is_refused_at_start(tmp_path):
    env = production_env(tmp_path, SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO")
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER must be HEADER,VALUE" in result.stderr


def test_laptop_mode_keeps_plain_http(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SECURE_") and k not in ("SECRET_KEY", "DEBUG")}
    env.update(EVALAPP_VAR_DIR=str(tmp_path), DEBUG="true")
    code = (
        "import os, json; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
        "from django.conf import settings; print(json.dumps([settings.SECURE_HSTS_SECONDS, settings.SECURE_SSL_REDIRECT, "
        "settings.X_FRAME_OPTIONS, settings.SECURE_CONTENT_TYPE_NOSNIFF]))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert __import__("json").loads(result.stdout) == [0, False, "DENY", True]


def test_each_celery_queue_has_its_own_exchange_and_routing_key():
    """A bare Queue(name) binds to the default exchange under the key "celery": every queue would then
    receive every message (seen on Redis: a worker consuming one queue got its tasks, the others' too)."""
    from evalapp.celery import app

    queues = app.amqp.queues
    assert {name: (q.exchange.name, q.routing_key) for name, q in queues.items()} == {
        name: (name, name) for name in ("celery", "calibration", "grading", "imports", "housekeeping")
    }
    assert app.amqp.router.route({}, "calibration.judge_chunk")["queue"].name == "calibration"
    assert app.amqp.router.route({}, "calibration.grade_chunk")["queue"].routing_key == "grading"
    for task in ("webhooks.deliver_webhook", "webhooks.sweep_webhooks", "calibration.watch_gates"):
        assert app.amqp.router.route({}, task)["queue"].name == "housekeeping"


def test_a_replica_url_adds_the_replica_database_and_turns_its_reads_on(tmp_path):
    code = (
        "import os, json; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
        "from django.conf import settings as s; "
        "print(json.dumps([sorted(s.DATABASES), s.DATABASES.get('replica', {}).get('HOST'), "
        "s.DATABASES.get('replica', {}).get('TEST'), s.DATABASE_REPLICA_READS, s.DATABASE_ROUTERS]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_REPLICA_URL", "TEST_DATABASE_NAME")}
    env.update(EVALAPP_VAR_DIR=str(tmp_path), DATABASE_URL="postgres://u@db.example:5432/x")
    without = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert without.returncode == 0, without.stderr
    assert __import__("json").loads(without.stdout) == [
        ["default"],
        None,
        None,
        False,
        ["evalapp.routers.ReplicaRouter"],
    ]
    env["DATABASE_REPLICA_URL"] = "postgres://u@replica.example:5432/x"
    with_replica = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert with_replica.returncode == 0, with_replica.stderr
    assert __import__("json").loads(with_replica.stdout) == [
        ["default", "replica"],
        "replica.example",
        {"MIRROR": "default"},
        True,
        ["evalapp.routers.ReplicaRouter"],
    ]
