"""A local OpenAI-compatible chat-completions server for tests and the bench: a real socket, the real protocol.

It grades the way a careful judge would on our prompt: "correct" when the expected answer occurs in the
answer to grade. Behaviour is configurable while it runs (the attributes are read per request):

    latency        seconds to wait before answering
    fail_429       answer HTTP 429 (with Retry-After: 0) to the first N requests
    fail_500       answer HTTP 500 to the next N requests
    hang           sleep `hang_seconds` (past any client timeout) on the next N requests
    hold_after     once this many requests were answered, hold every later one until `release()` (None:
                   never): a test that kills a worker mid-run stops it there whatever the machine's load
    stamps         (read) time.monotonic() at the arrival of every request, to check a rate limit
    per_second     (read) requests that arrived in each wall-clock second (epoch seconds -> count); also
                   served as JSON by `GET /stats` (and cleared by `POST /stats/reset`), for a server run
                   in another process (bench/judge_bench.py), with the epoch times of the first and the
                   last request (`first_arrival`, `last_arrival`: "first", "last")
    markers        answers containing "[[GARBAGE]]" get a reply with no JSON in it, "[[MALFORMED]]" a
                   body that is not a chat completion at all, "[[FLIP]]" the opposite verdict,
                   "[[BADCRIT]]" a reply whose first criterion is missing and whose others are out of range
    criteria       a request that names criteria (a json_schema response format's properties, or the
                   prompt's "- NAME: one of V1, V2" lines) is answered with each one's last value when the
                   verdict is correct and its first otherwise, in the same JSON object as the verdict
    reject_formats response_format types (json_schema, json_object) answered with HTTP 400, as a server
                   that does not support them does
    formats        (read) the response_format type of every chat request ("" for none)
    served_model   the `model` the reply reports (None: the requested one); `system_fingerprint` likewise
                   (None: no fingerprint in the reply)
    switch_after   once this many completions were answered, report `switch_model` / `switch_fingerprint`
                   instead (None: never), as a provider that upgrades the model behind a name does
    alternate      answers containing "[[ALTERNATE]]" get the opposite verdict on every second request
                   for the same answer text (a judge that disagrees with itself)
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_CRITERION_LINE = re.compile(r"^- (?P<name>\S+): one of (?P<values>.+?)(?: \(worst first\))?$", re.M)
_SECTION = re.compile(
    r"Expected answer:\n(?P<expected>.*?)\n\nAnswer to grade:\n(?P<answer>.*?)\n\nIs the answer", re.S
)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _criteria_asked(body: dict, prompt: str) -> dict[str, list[str]]:
    """{criterion: its values} a request asks for: a json_schema's properties, else the prompt's lines."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        props = rf["json_schema"]["schema"]["properties"]
        return {name: list(p["enum"]) for name, p in props.items() if name != "verdict"}
    return {m.group("name"): m.group("values").split(", ") for m in _CRITERION_LINE.finditer(prompt)}


class JudgeServer:
    def __init__(self, *, latency: float = 0.0, port: int = 0):
        self.latency = latency
        self.fail_429 = 0
        self.fail_500 = 0
        self.hang = 0
        self.hang_seconds = 5.0
        self.hold_after: int | None = None
        self.answered = 0
        self.released = threading.Event()
        self.requests = 0
        self.stamps: list[float] = []
        self.per_second: dict[int, int] = {}
        self.first_arrival: float | None = None  # epoch seconds of the first and the last request
        self.last_arrival: float | None = None
        self.completions = 0
        self.lock = threading.Lock()
        self.auth_headers: list[str] = []
        self.reject_formats: set[str] = set()
        self.formats: list[str] = []
        self.served_model: str | None = None
        self.system_fingerprint: str | None = None
        self.switch_after: int | None = None
        self.switch_model = ""
        self.switch_fingerprint: str | None = None
        self.seen_answers: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                # Headers and body go out as two writes; without this, Nagle's algorithm meets the client's
                # delayed ACK and every keep-alive response waits ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(self, status: int, body: bytes, content_type="application/json", headers=None):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def do_GET(self):
                if self.path != "/stats":
                    return self._send(404, b'{"error": "not found"}')
                with server.lock:
                    stats = {
                        "requests": server.requests,
                        "per_second": dict(server.per_second),
                        "first": server.first_arrival,
                        "last": server.last_arrival,
                    }
                return self._send(200, json.dumps(stats).encode())

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path == "/stats/reset":
                    with server.lock:
                        server.requests, server.per_second = 0, {}
                        server.first_arrival = server.last_arrival = None
                        server.stamps.clear()
                    return self._send(200, b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, b'{"error": "not found"}')
                with server.lock:
                    server.requests += 1
                    server.stamps.append(time.monotonic())
                    now = time.time()
                    second = int(now)
                    if server.first_arrival is None:
                        server.first_arrival = now
                    server.last_arrival = now
                    server.per_second[second] = server.per_second.get(second, 0) + 1
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    if server.fail_429 > 0:
                        server.fail_429 -= 1
                        action = "429"
                    elif server.fail_500 > 0:
                        server.fail_500 -= 1
                        action = "500"
                    elif server.hang > 0:
                        server.hang -= 1
                        action = "hang"
                    else:
                        action = "ok"
                if action == "429":
                    return self._send(429, b'{"error": {"message": "rate limited"}}', headers={"Retry-After": "0"})
                if action == "500":
                    return self._send(500, b'{"error": {"message": "boom"}}')
                if action == "hang":
                    time.sleep(server.hang_seconds)
                    return self._send(503, b'{"error": "too late"}')
                if server.hold_after is not None:
                    with server.lock:
                        server.answered += 1
                        held = server.answered > server.hold_after
                    if held:
                        server.released.wait(600)
                if server.latency:
                    time.sleep(server.latency)
                try:
                    body = json.loads(raw)
                    prompt = body["messages"][-1]["content"]
                    asked = (body.get("response_format") or {}).get("type", "")
                except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                    return self._send(400, b'{"error": {"message": "bad request"}}')
                with server.lock:
                    server.formats.append(asked)
                if asked in server.reject_formats:
                    return self._send(400, json.dumps({"error": {"message": f"{asked} is not supported"}}).encode())
                criteria = _criteria_asked(body, prompt)
                match = _SECTION.search(prompt)
                expected, answer = (match.group("expected"), match.group("answer")) if match else ("", "")
                if "[[MALFORMED]]" in answer:
                    return self._send(200, b"<html>upstream proxy error</html>", content_type="text/html")
                if "[[GARBAGE]]" in answer:
                    content = "I think the answer is probably fine, but I am not sure."
                else:
                    ok = bool(_norm(expected)) and _norm(expected) in _norm(answer)
                    if "[[FLIP]]" in answer:
                        ok = not ok
                    if "[[ALTERNATE]]" in answer:
                        with server.lock:
                            times = server.seen_answers.get(answer, 0)
                            server.seen_answers[answer] = times + 1
                        ok = ok if times % 2 == 0 else not ok
                    reply_obj: dict = {
                        "verdict": "correct" if ok else "incorrect",
                        "reason": "checked against the passage",
                    }
                    for name, values in criteria.items():
                        reply_obj[name] = values[-1] if ok else values[0]
                    if criteria and "[[BADCRIT]]" in answer:
                        names = list(criteria)
                        del reply_obj[names[0]]
                        for name in names[1:]:
                            reply_obj[name] = "out-of-range"
                    content = json.dumps(reply_obj)
                with server.lock:
                    switched = server.switch_after is not None and server.completions >= server.switch_after
                    server.completions += 1
                model = server.served_model if server.served_model is not None else body.get("model", "")
                fingerprint = server.system_fingerprint
                if switched:
                    model, fingerprint = server.switch_model, server.switch_fingerprint
                reply = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "model": model,
                    **({"system_fingerprint": fingerprint} if fingerprint is not None else {}),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                    ],
                    "usage": {
                        "prompt_tokens": len(prompt.split()),
                        "completion_tokens": len(content.split()),
                        "total_tokens": len(prompt.split()) + len(content.split()),
                    },
                }
                return self._send(200, json.dumps(reply).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 128
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def release(self) -> None:
        """Answer the requests `hold_after` holds, and every later one."""
        self.hold_after = None
        self.released.set()

    def start(self) -> JudgeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":  # pragma: no cover - python tests/judge_server.py PORT LATENCY (0 = any free port)
    import sys

    srv = JudgeServer(
        port=int(sys.argv[1]) if len(sys.argv) > 1 else 0, latency=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    ).start()
    print(srv.url, flush=True)
    srv.thread.join()
