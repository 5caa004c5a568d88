"""`make run`'s and `evalapp run`'s last step: the web server and a Celery worker (with beat) side by side,
until Ctrl-C.

Each child runs in its own process group, so Ctrl-C reaches this script alone and each child is asked to
stop exactly once (SIGTERM: Celery's warm shutdown, the server's exit); a child that has not stopped
after --grace seconds is killed. The address and the demo users are printed once the worker says it is
ready, so they are the last lines on screen rather than scrolled away by the worker's banner.

    python -m evalapp.serve --host 127.0.0.1 --port 8000 [--notice FILE] [--grace 10]

Both children are started through this interpreter (`-m celery`, `-m evalapp runserver`), so it works from
a checkout and from an installed wheel alike.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

READY = "ready."

# Seconds between the main loop's looks at the signal flag and the children.
POLL = 0.2


def _pump(stream: IO[str], ready: threading.Event) -> None:
    """Copy a child's output to ours, line by line, and note when the worker reports it is ready."""
    for line in iter(stream.readline, ""):
        sys.stdout.write(line)
        sys.stdout.flush()
        if READY in line and "celery@" in line:
            ready.set()


def _stop(children: list[subprocess.Popen[Any]], grace: float) -> int:
    # The main process only: Celery then stops its own pool (a signal to the whole group would kill the
    # pool's children under it and log each as an error).
    for child in children:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="8000")
    parser.add_argument("--notice", help="a file whose text is printed, after the address, once the worker is ready")
    parser.add_argument("--grace", type=float, default=10.0, help="seconds a child gets to stop before it is killed")
    args = parser.parse_args(argv)
    # The laptop's pair: DEBUG on unless the environment says otherwise (`make run` and `evalapp run` set it).
    env = {"DEBUG": "true", **os.environ}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalapp", "worker", "--beat", "--loglevel=INFO", "--concurrency=2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=env,
    )
    web = subprocess.Popen(
        [sys.executable, "-m", "evalapp", "runserver", f"{args.host}:{args.port}", "--noreload"],
        start_new_session=True,
        env=env,
    )
    children: list[subprocess.Popen[Any]] = [worker, web]
    ready = threading.Event()
    assert worker.stdout is not None
    threading.Thread(target=_pump, args=(worker.stdout, ready), daemon=True).start()
    # The handlers only write a flag. A handler runs on the main thread between any two of its bytecodes, so
    # one that took a lock could wait forever for a lock its own thread holds: threading.Event.set takes the
    # lock that Event.wait holds around its checks, and a Ctrl-C landing there hung this loop for good.
    stopping = [False]

    def on_signal(signum: int, frame: object) -> None:
        stopping[0] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    announced = False
    while not stopping[0]:
        if not announced and ready.is_set():
            notice = Path(args.notice).read_text(encoding="utf-8") if args.notice else ""
            print(
                f"\n{notice}\nevalapp on http://{args.host}:{args.port}/  (Ctrl-C stops the web server and the worker)",
                flush=True,
            )
            announced = True
        if any(child.poll() is not None for child in children):
            print("a child stopped on its own; stopping the other", file=sys.stderr, flush=True)
            break
        time.sleep(POLL)
    print("stopping the web server and the worker…", flush=True)
    return _stop(children, args.grace)


if __name__ == "__main__":
    sys.exit(main())
