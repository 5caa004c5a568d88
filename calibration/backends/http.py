"""Kept-alive plain-HTTP connections for judge calls, from the standard library's http.client. No Django.

httpx spends about a millisecond of CPU on each call (its layers of request and response models, h11
events and traces): at hundreds of judge calls a second that is most of what a worker process does, and
on a busy machine it is what holds a grading back. http.client spends about a quarter of that. It is used
for plain `http://` judges only (a vLLM, Ollama or llama.cpp server beside the workers, where calls are
many and cheap) and never where a proxy applies: TLS (certificate stores) and proxies stay with httpx,
exactly as before. The URL is parsed by httpx, as the allow list parses it (calibration.policies), so
the host connected to is the host that was checked.
"""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.request
from dataclasses import dataclass

import httpx


class HTTPTimeout(Exception):
    """The server did not accept the connection or answer within the timeout."""


class HTTPTransportError(Exception):
    """The server could not be reached, or the connection broke."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def plain_http_without_proxy(url: str) -> bool:
    """True for an http:// URL that no proxy setting of the environment (HTTP_PROXY, ALL_PROXY, NO_PROXY)
    applies to: the calls this module makes."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return False
    if parsed.scheme != "http" or not parsed.host:
        return False
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get("http") or proxies.get("all")):
        return True
    return bool(urllib.request.proxy_bypass(parsed.host))


class ConnectionPool:
    """Up to `size` idle kept-alive connections to one server, shared by the threads of a process. A call
    takes an idle connection or opens one (connect timeout `connect_timeout`, then `timeout` for every
    read and write, as httpx times them) and gives it back when the server keeps it open."""

    def __init__(self, url: str, *, headers: dict[str, str], timeout: float, connect_timeout: float, size: int):
        parsed = httpx.URL(url)
        self.host = parsed.host
        self.port = parsed.port or 80
        self.target = parsed.raw_path.decode("ascii")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.size = max(1, size)
        self.idle: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()

    def _connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.connect_timeout)
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(self.timeout)
        # Headers and body go out as two writes; without this, Nagle's algorithm meets the server's
        # delayed ACK and a kept-alive call can wait ~40 ms.
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def post(self, body: bytes) -> Response:
        """POST `body` (JSON) to the pool's URL. Raises HTTPTimeout or HTTPTransportError."""
        for attempt in range(2):
            with self.lock:
                reused = self.idle.pop() if self.idle else None
            try:
                conn = reused or self._connect()
            except TimeoutError as exc:
                raise HTTPTimeout(f"no connection within {self.connect_timeout:g}s: {exc}") from exc
            except OSError as exc:
                raise HTTPTransportError(str(exc) or exc.__class__.__name__) from exc
            try:
                conn.request("POST", self.target, body=body, headers=self.headers)
                response = conn.getresponse()
                data = response.read()
            except TimeoutError as exc:
                conn.close()
                raise HTTPTimeout(f"no answer within {self.timeout:g}s") from exc
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                conn.close()
                if reused is not None and attempt == 0:
                    continue  # a kept-alive connection the server had closed meanwhile: once more, on a new one
                raise HTTPTransportError(str(exc) or exc.__class__.__name__) from exc
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise HTTPTransportError(str(exc) or exc.__class__.__name__) from exc
            if response.will_close:
                conn.close()
            else:
                with self.lock:
                    keep = len(self.idle) < self.size
                    if keep:
                        self.idle.append(conn)
                if not keep:
                    conn.close()
            return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        raise AssertionError("unreachable")  # pragma: no cover
