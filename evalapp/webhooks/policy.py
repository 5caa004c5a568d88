"""What happens after an attempt to deliver: pure rules, one table (tests/evalapp/webhooks/test_policy.py)."""

from urllib.parse import urlsplit

DELIVERED, RETRY, FAILED = "delivered", "retry", "failed"


def attempt_outcome(*, status_code: int | None, attempts: int, max_attempts: int) -> str:
    """delivered, retry or failed, after the `attempts`-th attempt answered `status_code` (None: a timeout or
    a connection error). 2xx is delivered; what can heal by itself (no answer, 429, 5xx) is retried until
    `max_attempts`; any other answer (a 4xx, a redirect, which is never followed) fails at once."""
    if status_code is not None and 200 <= status_code < 300:
        return DELIVERED
    healable = status_code is None or status_code == 429 or status_code >= 500
    return RETRY if healable and attempts < max_attempts else FAILED


def backoff_seconds(*, attempts: int, base: float, cap: float = 3600) -> float:
    """Seconds to wait after the `attempts`-th failed attempt: base, 2·base, 4·base ... at most `cap`."""
    return float(min(cap, base * 2 ** max(0, attempts - 1)))


def url_problem(url: object) -> str | None:
    """Why a URL cannot receive webhooks (only http and https, with a host), or None when it can."""
    if not isinstance(url, str) or not url.strip():
        return "give the receiver's URL"
    if len(url) > 2000:
        return "at most 2000 characters"
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"not a URL: {url[:100]!r}"
    if parts.scheme not in ("http", "https"):
        return f"only http:// and https:// URLs receive webhooks, not {url[:100]!r}"
    if not parts.hostname:
        return f"the URL names no host: {url[:100]!r}"
    return None
