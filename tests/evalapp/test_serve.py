"""evalapp/serve.py (`make run`'s last step): Ctrl-C stops the web server and the worker once each, cleanly,
and the address is printed after the worker's banner."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.celery_worker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ctrl_c_stops_both_children_once_and_cleanly(tmp_path):
    port = free_port()
    notice = tmp_path / "notice.txt"
    notice.write_text("users: demo-expert …\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(EVALAPP_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="evalapp.settings.base")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalapp.serve", "--port", str(port), "--notice", str(notice)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "evalapp on http://" in line:
            break
    assert any(f"evalapp on http://127.0.0.1:{port}/" in x for x in lines), "".join(lines)
    ready_at = next(i for i, x in enumerate(lines) if "ready." in x and "celery@" in x)
    notice_at = next(i for i, x in enumerate(lines) if "users: demo-expert" in x)
    address_at = next(i for i, x in enumerate(lines) if "evalapp on http://" in x)
    assert ready_at < notice_at < address_at

    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does to the foreground group
    rest, _ = proc.communicate(timeout=30)
    output = "".join(lines) + rest

    assert proc.returncode == 0, output
    assert output.count("stopping the web server and the worker") == 1
    assert output.count("Warm shutdown") == 1
    for bad in ("Segmentation fault", "Traceback", "ERROR/", "No hostname was supplied"):
        assert bad not in output, output
    assert len(output.splitlines()) < 200
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # the web server is gone


# Drives evalapp.serve.main with two stand-in children (a shell that prints the worker's "ready." line, and a
# sleep), raising SIGINT at the k-th line the main thread runs once the handler is in place, for every k up to
# the script's argument: a Ctrl-C at any point of the loop, including inside whatever it waits on.
_EVERY_MOMENT = r"""
import signal, subprocess, sys
import evalapp.serve as serve

serve.POLL = 0.002
popen = subprocess.Popen
worker = ["sh", "-c", "echo 'celery@stand-in ready.'; exec sleep 60"]
calls = []

def stand_in(args, **kwargs):
    calls.append(args)
    return popen(worker if len(calls) % 2 else ["sleep", "60"], **kwargs)

serve.subprocess.Popen = stand_in
for k in range(1, int(sys.argv[1]) + 1):
    seen = [0]

    def tracer(frame, event, arg):
        if event == "line" and signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            seen[0] += 1
            if seen[0] == k:
                signal.raise_signal(signal.SIGINT)
        return tracer

    sys.settrace(tracer)
    code = serve.main(["--grace", "5"])
    sys.settrace(None)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    assert code == 0, (k, code)
    print("stopped at line", k, flush=True)
"""


def test_a_ctrl_c_at_any_moment_of_the_loop_stops_serve():
    # Before, the handler called threading.Event.set while the loop waited in Event.wait: a signal landing
    # where Event.wait holds its lock made the handler wait for that lock on the same thread, for ever.
    moments = 120
    out = subprocess.run(
        [sys.executable, "-c", _EVERY_MOMENT, str(moments)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("stopped at line") == moments
    assert out.stdout.count("stopping the web server and the worker") == moments
