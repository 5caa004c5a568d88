"""The `evalapp` command: every manage.py command without a checkout (`evalapp migrate`, `evalapp
import_questions FILE --dataset D`, …), and `evalapp run`, which migrates, collects the static files and
serves the web app and a Celery worker with beat until Ctrl-C (`--demo` loads the demo data first)."""

from __future__ import annotations

import os
import sys


def _run(argv: list[str]) -> int:
    import argparse

    from django.core.management import call_command

    parser = argparse.ArgumentParser(prog="evalapp run", description="migrate, collect static files, then serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="8000")
    parser.add_argument("--demo", action="store_true", help="load the demo data (seed_demo) before serving")
    args = parser.parse_args(argv)
    # The laptop's server: DEBUG on (plain HTTP, a generated key) unless the environment says otherwise.
    # Set before the settings load; the web server and the worker (evalapp.serve) inherit it.
    os.environ.setdefault("DEBUG", "true")
    import django

    django.setup()
    call_command("migrate", interactive=False, verbosity=1)
    call_command("collectstatic", interactive=False, verbosity=0)
    serve_args = ["--host", args.host, "--port", str(args.port)]
    if args.demo:
        from evalapp.env import VAR_DIR

        VAR_DIR.mkdir(parents=True, exist_ok=True)
        notice = VAR_DIR / "seed_demo.txt"
        with open(notice, "w", encoding="utf-8") as out:
            call_command("seed_demo", stdout=out)
        serve_args += ["--notice", str(notice)]
    from evalapp.serve import main as serve

    return serve(serve_args)


def main(argv: list[str] | None = None) -> int:
    """`evalapp COMMAND [ARGS]`: manage.py's commands under the project's settings, or `run`."""
    args = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalapp.settings.base")
    if args[:1] == ["run"]:
        return _run(args[1:])
    from django.core.management import execute_from_command_line

    execute_from_command_line(["evalapp", *args])
    return 0
