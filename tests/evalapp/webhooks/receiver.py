"""A local webhook receiver: a threaded http.server that checks every signature and answers the status
codes it is told to, in order (then 200)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from evalapp.webhooks.signing import verify


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    signature_ok: bool

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    secret: str
    answers: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    delay: float = 0.0  # seconds before answering, to make the sender time out

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                ok = verify(
                    receiver.secret,
                    headers.get("x-evalapp-timestamp", ""),
                    body,
                    headers.get("x-evalapp-signature", ""),
                )
                receiver.received.append(Received(headers, body, ok))
                status = receiver.answers.pop(0) if receiver.answers else 200
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(status if ok else 401)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
