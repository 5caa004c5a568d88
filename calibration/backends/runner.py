"""Judging many items concurrently with retries, backoff with jitter, and a rate limit. No Django.

Used by the Celery chunk task and by bench/judge_bench.py: one code path for both.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import redis

from calibration.backends.base import (
    Backend,
    JudgeItem,
    JudgeResult,
    PermanentJudgeError,
    TransientJudgeError,
)
from evalapp.metrics import JUDGE_CALLS, JUDGE_RATE_LIMITED, JUDGE_RETRIES


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped; a server's Retry-After is honoured when longer."""

    attempts: int = 4
    base: float = 0.5
    cap: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before attempt number `attempt + 1` (attempt counts from 1)."""
        rng = rng or random
        backoff = rng.uniform(0, min(self.cap, self.base * (2 ** (attempt - 1))))
        return max(backoff, min(retry_after or 0.0, self.cap))


class RateLimiter:
    """A token bucket shared by the threads of one process: at most `rate` calls a second on average, and
    with the default burst of one, consecutive calls at least 1/rate seconds apart."""

    def __init__(self, rate: float | None, burst: int | None = None):
        self.rate = rate if rate and rate > 0 else None
        self.capacity = float(burst or 1)
        self.tokens = self.capacity
        self.updated = time.monotonic()
        self.lock = threading.Lock()

    def acquire(self) -> None:
        if self.rate is None:
            return
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                wait = (1 - self.tokens) / self.rate
            time.sleep(wait)


# Reserve the next ARGV[2] free call slots of a key on the Redis server's own clock, atomically: the first
# is the later of now and the key's next free slot, the others follow at the interval (a generic cell rate
# algorithm, a block at a time). Returns how long to wait for the first, as a string (a Lua number would
# come back truncated to an integer).
_RESERVE_SLOT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local slot = tonumber(redis.call('GET', KEYS[1]) or '0')
if slot < now then slot = now end
local interval = tonumber(ARGV[1])
local count = tonumber(ARGV[2] or '1')
local ttl = math.ceil((slot + count * interval - now) * 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.6f', slot + count * interval), 'PX', ttl)
return string.format('%.6f', slot - now)
"""


class RedisRateLimiter:
    """At most `rate` calls a second across every worker that shares the Redis server, spaced 1/rate apart:
    each call takes the next free slot (reserved by one atomic script) and sleeps until it. Any rate works,
    one call a minute as well as fifty a second. If Redis fails, the process-local bucket takes over.

    At a fast rate (BLOCK_SECONDS of it is two slots or more) one script reserves a block of consecutive
    slots, handed out in order to this process's calls: a round trip to Redis per block, not one on every
    call's path. A slot nobody took within half an interval of its time is dropped, never used late, so a
    second still holds no more calls than slots (the margin covers the half interval)."""

    # A hair over 1/rate, so that sleep jitter never packs rate + 1 calls into one second.
    MARGIN = 1.01
    # A block holds about this many seconds of slots, at most MAX_BLOCK.
    BLOCK_SECONDS = 0.01
    MAX_BLOCK = 16

    def __init__(self, client, key: str, rate: float):
        self.client = client
        self.key = f"evalapp:judge-rate:{key}"
        self.rate = rate
        self.interval = self.MARGIN / rate
        self.block = max(1, min(self.MAX_BLOCK, int(rate * self.BLOCK_SECONDS)))
        self.reserve = client.register_script(_RESERVE_SLOT)
        self.fallback = RateLimiter(rate)
        self.lock = threading.Lock()
        self.slots: deque[float] = deque()  # reserved slots not taken yet, in time.monotonic()

    def acquire(self) -> int | None:
        """Wait for a slot; returns the one-second window (epoch seconds) the call was made in."""
        with self.lock:
            now = time.monotonic()
            while self.slots and self.slots[0] < now - self.interval / 2:
                self.slots.popleft()  # its time passed unused: another call in its second would be one too many
            if not self.slots:
                try:
                    wait = float(self.reserve(keys=[self.key], args=[f"{self.interval:.6f}", self.block]))
                except Exception:  # noqa: BLE001 - a limiter must never stop the judging
                    slot = None
                else:
                    first = time.monotonic() + wait
                    self.slots.extend(first + i * self.interval for i in range(self.block))
            slot = self.slots.popleft() if self.slots else None
        if slot is None:
            self.fallback.acquire()
            return None
        wait = slot - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return int(time.time())


_LIMITERS: dict[str, object] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(key: str, rate: float | None, *, redis_url: str | None = None):
    """The limiter of one backend configuration: shared by every worker through Redis when the broker is
    Redis, else shared by the threads of this process."""
    rate = rate if rate and rate > 0 else None
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is not None and limiter.rate == rate:
            return limiter
        if rate is not None and redis_url:
            limiter = RedisRateLimiter(redis.Redis.from_url(redis_url, socket_timeout=2), key, rate)
        else:
            limiter = RateLimiter(rate)
        _LIMITERS[key] = limiter
        return limiter


_SLOTS: dict[tuple[str, int], threading.BoundedSemaphore] = {}


def slots_for(key: str, concurrency: int) -> threading.BoundedSemaphore:
    """The `concurrency` request slots of one backend configuration in this process, shared by every chunk
    the process judges at once. A prefork worker child runs one chunk at a time, so its chunk has them all;
    a worker on the threads pool (`--pool threads --concurrency 2`) runs two chunks at once and the second
    fills the slots the first leaves idle while it reads its answers, writes its last verdicts and closes,
    with never more than `concurrency` requests of the process in flight."""
    with _LIMITERS_LOCK:
        slots = _SLOTS.get((key, concurrency))
        if slots is None:
            slots = _SLOTS[(key, concurrency)] = threading.BoundedSemaphore(max(1, concurrency))
        return slots


@dataclass(frozen=True)
class Outcome:
    """One item's end state: a judge result, or `error` with the last error message."""

    key: object
    result: JudgeResult | None
    error: str = ""
    attempts: int = 1
    transient: bool = False


def judge_one(
    backend: Backend,
    item: JudgeItem,
    *,
    retry: RetryPolicy,
    limiter: RateLimiter | None = None,
    should_stop: Callable[[], bool] | None = None,
    sleep=time.sleep,
) -> tuple[JudgeResult | None, str, int, bool]:
    """Judge one item, retrying transient failures. Returns (result, error, attempts, last_error_was_transient)."""
    error = ""
    for attempt in range(1, retry.attempts + 1):
        if should_stop is not None and should_stop():
            return None, "cancelled", attempt - 1, True
        if limiter is not None:
            limiter.acquire()
        name = backend.name
        try:
            result = backend.judge(item)
        except PermanentJudgeError as exc:
            JUDGE_CALLS.labels(backend=name, outcome="error").inc()
            return None, str(exc), attempt, False
        except TransientJudgeError as exc:
            JUDGE_CALLS.labels(backend=name, outcome="transient").inc()
            if exc.status == 429:
                JUDGE_RATE_LIMITED.labels(backend=name).inc()
            error = str(exc)
            if attempt < retry.attempts:
                JUDGE_RETRIES.labels(backend=name).inc()
                sleep(retry.delay(attempt, exc.retry_after))
        except Exception as exc:  # noqa: BLE001 - a backend bug fails this item, visibly, not the whole chunk
            JUDGE_CALLS.labels(backend=name, outcome="error").inc()
            return None, f"{exc.__class__.__name__}: {exc}", attempt, False
        else:
            JUDGE_CALLS.labels(backend=name, outcome="invalid" if result.verdict == "invalid" else "ok").inc()
            return result, "", attempt, False
    return None, error, retry.attempts, True


def judge_items(
    backend: Backend,
    items: Iterable[tuple[object, JudgeItem]],
    *,
    concurrency: int = 8,
    retry: RetryPolicy | None = None,
    limiter: RateLimiter | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_tick: Callable[[], None] | None = None,
    slots: threading.BoundedSemaphore | None = None,
) -> list[Outcome]:
    """Judge (key, item) pairs with up to `concurrency` requests in flight (and, with `slots`, only while
    holding one of them: slots_for); `on_outcome` is called as each finishes and `on_tick` about once a
    second (both from the calling thread, so they may use the database)."""
    retry = retry or RetryPolicy()
    items = list(items)
    outcomes: list[Outcome] = []

    def work(pair):
        key, item = pair
        if slots is None:
            result, error, attempts, transient = judge_one(
                backend, item, retry=retry, limiter=limiter, should_stop=should_stop
            )
        else:
            with slots:
                result, error, attempts, transient = judge_one(
                    backend, item, retry=retry, limiter=limiter, should_stop=should_stop
                )
        return Outcome(key, result, error, attempts, transient)

    if concurrency <= 1 or len(items) <= 1 or not backend.concurrent:
        for pair in items:
            outcome = work(pair)
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
        return outcomes
    finished: queue.Queue = queue.Queue()

    def work_and_report(pair):
        try:
            finished.put(work(pair))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            finished.put(exc)

    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        for pair in items:
            pool.submit(work_and_report, pair)
        # Outcomes as each finishes, not in submission order: one slow item must not hold back the others'
        # writes; and a tick at least once a second, so the caller shows it is alive while calls are slow.
        while len(outcomes) < len(items):
            try:
                outcome = finished.get(timeout=1.0)
            except queue.Empty:
                outcome = None
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome is not None:
                outcomes.append(outcome)
                if on_outcome:
                    on_outcome(outcome)
            if on_tick:
                on_tick()
    return outcomes
