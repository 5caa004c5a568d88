"""`openai`: any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp, OpenAI itself).

The prompt gives the judge the question, the gold passage, the expected answer and the answer, and
asks whether the answer is consistent with the passage, as a JSON verdict. Temperature 0. What
cannot be parsed is `invalid` with the raw output kept; 429, 5xx, timeouts and refused connections
raise TransientJudgeError (the caller retries with backoff), other 4xx PermanentJudgeError.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import replace
from typing import Any

import httpx

from calibration.backends.base import (
    Backend,
    JudgeItem,
    JudgeResult,
    PermanentJudgeError,
    TransientJudgeError,
)
from calibration.backends.criteria_format import (
    MODES,
    criteria_instructions,
    criteria_values,
    reply_object,
    response_schema,
)
from calibration.backends.http import ConnectionPool, HTTPTimeout, HTTPTransportError, plain_http_without_proxy
from calibration.backends.prompt import prompt_messages


def parse_verdict(content: str | None) -> str:
    """ "correct" / "incorrect" from a judge's reply holding a JSON object with `verdict`; else "invalid".
    The object is the reply's first (criteria_format.reply_object: the whole text, a fenced block, or the
    outermost braces)."""
    obj = reply_object(content)
    if obj is None:
        return "invalid"
    value = obj.get("verdict", obj.get("label"))
    if isinstance(value, str) and value.strip().lower() in ("correct", "incorrect"):
        return value.strip().lower()
    if isinstance(obj.get("correct"), bool):
        return "correct" if obj["correct"] else "incorrect"
    return "invalid"


def _reported(payload: Any, key: str) -> str:
    """A string the server reports about itself (`model`, `system_fingerprint`), "" when absent or not text."""
    value = payload.get(key) if isinstance(payload, dict) else None
    return value[:200] if isinstance(value, str) else ""


def _retry_after(headers) -> float | None:
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


_CLIENTS: dict[tuple, httpx.Client] = {}
_CLIENTS_LOCK = threading.Lock()


def _shared_client(headers: tuple, timeout: float, concurrency: int) -> httpx.Client:
    """One HTTP client per configuration and process, so consecutive chunks reuse kept-alive connections
    (and the TLS context, which costs tens of milliseconds to build)."""
    key = (headers, timeout, concurrency, os.getpid())
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None or client.is_closed:
            client = _CLIENTS[key] = httpx.Client(
                headers=dict(headers),
                timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)),
                limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            )
        return client


_POOLS: dict[tuple, ConnectionPool] = {}


def _shared_pool(url: str, headers: tuple, timeout: float, concurrency: int) -> ConnectionPool:
    """One pool of kept-alive plain-HTTP connections per configuration and process (see backends.http)."""
    key = (url, headers, timeout, concurrency, os.getpid())
    with _CLIENTS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = ConnectionPool(
                url, headers=dict(headers), timeout=timeout, connect_timeout=min(5.0, timeout), size=concurrency
            )
        return pool


class OpenAIBackend(Backend):
    name = "openai"

    def __post_init__(self):
        from django.conf import settings

        from calibration.policies import can_call_judge_url, judge_url_refusal

        base = str(self.params.get("base_url") or getattr(settings, "JUDGE_OPENAI_BASE_URL", ""))
        self.url = base.rstrip("/") + "/chat/completions"
        # Checked here as well as when a version is created: a version stored before the list changed, or
        # written to the database by other means, must never reach a server outside the list.
        allowed = list(getattr(settings, "JUDGE_ALLOWED_BASE_URLS", []))
        loopback = bool(getattr(settings, "JUDGE_ALLOW_LOOPBACK", False))
        reachable = all(can_call_judge_url(url, allowed=allowed, loopback=loopback) for url in (base, self.url))
        self.refusal = "" if reachable else judge_url_refusal(base, allowed=allowed, loopback=loopback)
        key = self.params.get("api_key") or getattr(settings, "JUDGE_OPENAI_API_KEY", "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        timeout = float(self.params.get("timeout", 30))
        concurrency = int(self.params.get("concurrency", 8))
        # Plain http:// (a server beside the workers) through http.client, a quarter of httpx's CPU a call;
        # TLS and proxies through httpx.
        if plain_http_without_proxy(self.url):
            self.pool: ConnectionPool | None = _shared_pool(
                self.url, tuple(sorted(headers.items())), timeout, concurrency
            )
            self.client: httpx.Client | None = None
        else:
            self.pool = None
            self.client = _shared_client(tuple(sorted(headers.items())), timeout, concurrency)

        # With criteria: the strictest response format the server has not refused yet (MODES).
        self.mode = MODES[0]

    def messages(self, item: JudgeItem) -> list[dict]:
        messages = prompt_messages(
            template=self.prompt_template, system=self.params.get("system") or "", rubric=self.rubric, item=item
        )
        if self.criteria:
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + criteria_instructions(self.criteria)}
        return messages

    def judge(self, item: JudgeItem) -> JudgeResult:
        if self.refusal:
            raise PermanentJudgeError(self.refusal)
        body: dict[str, Any] = {"model": self.model, "messages": self.messages(item), "temperature": 0}
        if "max_tokens" in self.params:
            body["max_tokens"] = int(self.params["max_tokens"])
        if self.params.get("json_mode") in (True, "true", "1"):
            body["response_format"] = {"type": "json_object"}
        start = time.perf_counter()
        if self.criteria:
            return self._judge_criteria(body, start)
        status, headers, raw = self._post(body, start)
        return self._result(status, headers, raw, start)

    def _judge_criteria(self, body: dict, start: float) -> JudgeResult:
        """Ask with the strictest response format the server takes: a server that refuses one (HTTP 400)
        is asked again with the next (json_schema, then json_object, then the prompt alone), and later items
        start from the one it took. The mode used is on the result (`response_format`)."""
        while True:
            mode = self.mode
            asked = dict(body)
            asked.pop("response_format", None)
            if mode == "json_schema":
                asked["response_format"] = response_schema(self.criteria)
            elif mode == "json_object":
                asked["response_format"] = {"type": "json_object"}
            status, headers, raw = self._post(asked, start)
            if status == 400 and mode != MODES[-1]:
                following = MODES[MODES.index(mode) + 1]
                with _CLIENTS_LOCK:
                    if MODES.index(self.mode) < MODES.index(following):
                        self.mode = following
                continue
            result = self._result(status, headers, raw, start)
            obj = reply_object(result.raw_output) if result.reason != "the response is not a chat completion" else None
            return replace(result, values=criteria_values(obj, self.criteria), response_format=mode)

    def _result(self, status: int, headers: Any, raw: str, start: float) -> JudgeResult:
        latency = (time.perf_counter() - start) * 1000
        if status == 429 or status >= 500:
            raise TransientJudgeError(f"HTTP {status} from the judge", retry_after=_retry_after(headers), status=status)
        if status >= 400:
            raise PermanentJudgeError(f"HTTP {status} from the judge: {raw[:500]}")
        try:
            payload = json.loads(raw)
            content = payload["choices"][0]["message"]["content"]
            usage = payload.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError):
            return JudgeResult(
                verdict="invalid",
                raw_output=raw[:10_000],
                latency_ms=latency,
                reason="the response is not a chat completion",
            )
        verdict = parse_verdict(content)
        return JudgeResult(
            verdict=verdict,
            raw_output=(content if isinstance(content, str) else raw)[:10_000],
            latency_ms=latency,
            prompt_tokens=usage.get("prompt_tokens") if isinstance(usage, dict) else None,
            completion_tokens=usage.get("completion_tokens") if isinstance(usage, dict) else None,
            reason="" if verdict != "invalid" else "no JSON verdict in the judge's reply",
            served_model=_reported(payload, "model"),
            system_fingerprint=_reported(payload, "system_fingerprint"),
        )

    def _post(self, body: dict, start: float) -> tuple[int, Any, str]:
        """(status, headers, body text) of the call; TransientJudgeError when the judge cannot be reached."""
        if self.pool is not None:
            try:
                answer = self.pool.post(json.dumps(body).encode())
            except HTTPTimeout as exc:
                raise TransientJudgeError(f"timeout after {time.perf_counter() - start:.1f}s: {exc}") from exc
            except HTTPTransportError as exc:
                raise TransientJudgeError(f"cannot reach the judge at {self.url}: {exc}") from exc
            return answer.status, answer.headers, answer.text
        assert self.client is not None
        try:
            response = self.client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise TransientJudgeError(f"timeout after {time.perf_counter() - start:.1f}s: {exc}") from exc
        except httpx.TransportError as exc:
            raise TransientJudgeError(f"cannot reach the judge at {self.url}: {exc}") from exc
        return response.status_code, response.headers, response.text

    def close(self) -> None:
        """The client is shared by the chunks a worker process runs (kept-alive connections); nothing to close."""
