"""The plain-HTTP connection pool of judge calls, against real sockets: kept-alive connections, a
connection the server closed meanwhile, an unreachable server; and when httpx keeps the call."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from calibration.backends import JudgeItem, TransientJudgeError, backend_for
from calibration.backends.http import ConnectionPool, HTTPTransportError, plain_http_without_proxy

ITEM = JudgeItem(run_id="r", qid="q", question="how long?", answer="It is 30 days.", expected="30 days")


class OneAnswerPerConnection(BaseHTTPRequestHandler):
    """Answers as if it kept the connection open (HTTP/1.1, no `Connection: close`), then closes it: what a
    server does to an idle kept-alive connection at its own timeout."""

    protocol_version = "HTTP/1.1"
    connections: list[int] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.connections.append(id(self.connection))
        body = json.dumps({"n": len(self.connections)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = self.server.close_after_answer


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), OneAnswerPerConnection)
    httpd.daemon_threads = True
    httpd.close_after_answer = False
    OneAnswerPerConnection.connections = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def pool_for(httpd, size=2) -> ConnectionPool:
    host, port = httpd.server_address[:2]
    return ConnectionPool(
        f"http://{host}:{port}/v1/chat/completions", headers={}, timeout=5, connect_timeout=5, size=size
    )


def test_calls_reuse_one_kept_alive_connection(server):
    pool = pool_for(server)
    answers = [json.loads(pool.post(b"{}").body) for _ in range(3)]
    assert answers == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert len(set(OneAnswerPerConnection.connections)) == 1
    assert len(pool.idle) == 1


def test_a_connection_the_server_closed_is_replaced_and_the_call_made_once(server):
    server.close_after_answer = True
    pool = pool_for(server)
    assert json.loads(pool.post(b"{}").body) == {"n": 1}
    assert len(pool.idle) == 1  # the server said nothing of closing it
    assert json.loads(pool.post(b"{}").body) == {"n": 2}
    assert len(OneAnswerPerConnection.connections) == 2  # each call reached the server once


def test_an_unreachable_server_is_a_transport_error_and_a_transient_judge_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    pool = ConnectionPool(
        f"http://127.0.0.1:{port}/v1/chat/completions", headers={}, timeout=1, connect_timeout=1, size=1
    )
    with pytest.raises(HTTPTransportError):
        pool.post(b"{}")
    b = backend_for("openai", model="judge-1", params={"base_url": f"http://127.0.0.1:{port}/v1"})
    with pytest.raises(TransientJudgeError) as refused:
        b.judge(ITEM)
    assert f"cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions" in str(refused.value)


@pytest.mark.parametrize(
    ("url", "env", "plain"),
    [
        ("http://127.0.0.1:8001/v1", {}, True),
        ("https://api.openai.com/v1", {}, False),  # TLS stays with httpx
        ("http://judge.internal:8000/v1", {"HTTP_PROXY": "http://proxy:3128"}, False),
        ("http://judge.internal:8000/v1", {"ALL_PROXY": "http://proxy:3128"}, False),
        ("http://judge.internal:8000/v1", {"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "judge.internal"}, True),
        ("not a url", {}, False),
    ],
)
def test_which_calls_go_through_the_pool(monkeypatch, url, env, plain):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert plain_http_without_proxy(url) is plain


def test_the_backend_goes_through_httpx_where_a_proxy_applies(monkeypatch, settings):
    settings.JUDGE_ALLOW_LOOPBACK = True
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    proxied = backend_for("openai", model="judge-1", params={"base_url": "http://judge.internal:8000/v1"})
    assert (proxied.pool, proxied.client is not None) == (None, True)
    monkeypatch.delenv("HTTP_PROXY")
    direct = backend_for("openai", model="judge-1", params={"base_url": "http://judge.internal:8000/v1"})
    assert (direct.pool is not None, direct.client) == (True, None)
