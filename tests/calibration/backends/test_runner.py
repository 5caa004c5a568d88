"""Retries, backoff and rate limits of the judging runner (no database)."""

import bisect
import collections
import itertools
import random
import socket
import threading
import time

import pytest

from calibration.backends import Backend, JudgeItem, JudgeResult, TransientJudgeError
from calibration.backends.runner import (
    RateLimiter,
    RedisRateLimiter,
    RetryPolicy,
    judge_items,
)

ITEM = JudgeItem(run_id="r", qid="q", question="", answer="")


def test_backoff_is_capped_jittered_and_honours_retry_after():
    policy = RetryPolicy(attempts=5, base=0.5, cap=4)
    rng = random.Random(0)
    delays = [policy.delay(a, rng=rng) for a in range(1, 8)]
    assert all(0 <= d <= 4 for d in delays)
    assert len(set(delays)) == len(delays)  # jittered
    assert policy.delay(1, retry_after=3.0, rng=rng) >= 3.0
    assert policy.delay(1, retry_after=100, rng=rng) == 4  # a server's Retry-After is capped too


class Flaky(Backend):
    """Fails transiently a given number of times, then answers."""

    failures = 0

    def judge(self, item):
        if self.failures > 0:
            self.failures -= 1
            raise TransientJudgeError("HTTP 503", status=503)
        return JudgeResult("correct")


def test_transient_failures_retry_then_error_after_the_last_attempt():
    b = Flaky()
    b.failures = 2
    ok = judge_items(b, [(1, ITEM)], retry=RetryPolicy(attempts=3, base=0.001, cap=0.001))
    assert (ok[0].result.verdict, ok[0].attempts) == ("correct", 3)
    b.failures = 5
    bad = judge_items(b, [(1, ITEM)], retry=RetryPolicy(attempts=3, base=0.001, cap=0.001))
    assert (bad[0].result, bad[0].transient, bad[0].error, bad[0].attempts) == (None, True, "HTTP 503", 3)


def test_local_rate_limiter_spreads_calls_over_seconds():
    limiter = RateLimiter(20, burst=1)
    stamps = []
    for _ in range(10):
        limiter.acquire()
        stamps.append(time.monotonic())
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert min(gaps) > 0.03  # 20 a second with no burst: about 50 ms apart


def _redis():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            pass
    except OSError:
        pytest.skip("Redis is not running")
    import redis

    return redis.Redis(host="127.0.0.1", port=6379, db=12)


def test_redis_rate_limiter_holds_every_window_to_the_rate_across_threads():
    client = _redis()
    key = f"test-{time.time_ns()}"
    limiters = [RedisRateLimiter(client, key, 5) for _ in range(3)]  # three "workers"
    windows = []
    lock = threading.Lock()

    def work(limiter):
        for _ in range(4):
            window = limiter.acquire()
            with lock:
                windows.append(window)

    threads = [threading.Thread(target=work, args=(lim,)) for lim in limiters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(windows) == 12
    assert max(windows.count(w) for w in set(windows)) <= 5


def test_a_fast_redis_rate_limit_reserves_slots_in_blocks_and_holds_every_second():
    """At hundreds of calls a second, one Redis round trip per call is a hop on every call's path: the
    limiter reserves a few consecutive slots at once, and still no sliding second holds more than the rate.

    The second is checked on the slots the limiter reserved and handed out (every slot leaves its queue
    through popleft, used or dropped), and each call is checked to return no earlier than its slot: when a
    thread then runs is the machine's scheduling, which on two loaded cores can bunch a few calls that the
    limiter released apart."""
    client = _redis()
    key = f"test-{time.time_ns()}"
    rate = 400
    limiters = [RedisRateLimiter(client, key, rate) for _ in range(2)]  # two worker processes
    reserves = []
    slots: list[float] = []
    handed: dict[int, float] = {}

    class Recorded(collections.deque):
        def popleft(self):
            slot = super().popleft()
            slots.append(slot)
            handed[threading.get_ident()] = slot  # the last one a call pops is the one it was handed
            return slot

    for limiter in limiters:
        script = limiter.reserve

        def counted(*args, _script=script, **kwargs):
            reserves.append(1)
            return _script(*args, **kwargs)

        limiter.reserve = counted
        limiter.slots = Recorded()
    early: list[float] = []
    calls = [0]
    end = time.monotonic() + 1.6

    def work(limiter):
        while time.monotonic() < end:
            limiter.acquire()
            returned = time.monotonic()
            slot = handed[threading.get_ident()]
            if returned < slot:
                early.append(slot - returned)
            calls[0] += 1

    threads = [threading.Thread(target=work, args=(lim,)) for lim in limiters for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    slots.sort()
    busiest = max(bisect.bisect_left(slots, s + 1.0) - i for i, s in enumerate(slots))
    assert busiest <= rate, busiest
    assert early == []
    assert calls[0] > rate  # the limit, not the threads, held them back
    assert len(reserves) * 3 <= calls[0], (len(reserves), calls[0])


class Broken(Backend):
    def judge(self, item):
        raise ValueError("bad template")


def test_a_backend_bug_is_an_error_for_the_item_not_a_crash():
    outcomes = judge_items(Broken(), [(1, ITEM), (2, ITEM)], concurrency=2)
    assert sorted((o.key, o.result, o.error, o.transient) for o in outcomes) == [
        (1, None, "ValueError: bad template", False),
        (2, None, "ValueError: bad template", False),
    ]


class Counting(Backend):
    """Counts the calls in flight at once; each call takes 20 ms."""

    def __post_init__(self):
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0

    def judge(self, item):
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(0.02)
        with self.lock:
            self.in_flight -= 1
        return JudgeResult("correct")


def test_two_chunks_judged_at_once_in_one_process_share_its_slots():
    """A threads-pool worker runs two chunks at once: together they never have more calls in flight than
    the configuration's concurrency, and every item is judged."""
    from calibration.backends.runner import slots_for

    backend = Counting()
    slots = slots_for(f"test-{time.time_ns()}", 3)
    results: list = []

    def chunk(offset):
        results.extend(judge_items(backend, [(offset + i, ITEM) for i in range(12)], concurrency=3, slots=slots))

    threads = [threading.Thread(target=chunk, args=(n * 100,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.key for o in results) == [*range(12), *range(100, 112)]
    assert backend.most == 3
    assert slots_for("same-key", 3) is slots_for("same-key", 3)
