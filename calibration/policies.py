"""Pure permission and gate rules, in can_x / check_can_x pairs."""
import ipaddress
from typing import TYPE_CHECKING

import httpx

from evalapp.errors import Problem, ServiceError
from evalapp.roles import ENGINEER, has_role

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

GATE_POLICIES = ("point", "lower_bound")
GATE_EXIT = {"pass": 0, "fail": 1, "unmeasured": 3, "stale": 3}


def can_manage_judges(user: "User | AnonymousUser | None") -> bool:
    """Engineers create judge versions, start, cancel and resume calibrations, and grade runs."""
    return has_role(user, ENGINEER)


def can_read_judges(user: "User | AnonymousUser | None") -> bool:
    """Engineers read judges, gates and disagreements (which name runs and per-answer verdicts);
    adjudicators settle items and see neither runs nor judges. The blind scope applies on top."""
    return has_role(user, ENGINEER)


def can_grade(*, gate_status: str, force: bool, reason: str) -> bool:
    """A judge version grades runs only when its gate passes, or when forced with a stated reason."""
    return gate_status == "pass" or (force and bool(reason.strip()))


def check_can_grade(*, gate_status: str, force: bool, reason: str) -> None:
    """Raise (exit 1 / HTTP 409) when the gate is not `pass` and the grading is not forced with a reason."""
    if can_grade(gate_status=gate_status, force=force, reason=reason):
        return
    if force:
        raise ServiceError("a forced grading needs a reason; it is recorded with the grading run",
                           [Problem("required when forcing", field="reason")])
    raise ServiceError(f"the judge version's gate is {gate_status!r}, not 'pass'; calibrate it first or force "
                       "the grading with a reason (the force is recorded)", code=1, status=409)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _parsed(url: str) -> tuple[str, str, int, list[str]] | None:
    """(scheme, host, port, path segments) of an http(s) URL with nothing a prefix test could be fooled by
    (credentials, a query, a fragment, dot segments, even percent-encoded ones); else None.

    Parsed by httpx, the client that makes the call, so the host checked is the host connected to."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    scheme = parsed.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parsed.host or parsed.userinfo or parsed.query or parsed.fragment:
        return None
    if "@" in url.split("//", 1)[-1].split("/", 1)[0] or "\\" in url:
        return None
    segments = [s for s in parsed.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        return None
    return scheme, parsed.host.lower(), parsed.port or _DEFAULT_PORTS[scheme], segments


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def can_call_judge_url(url: str, *, allowed: list[str], loopback: bool) -> bool:
    """A judge may call `url` when it lies under one of the `allowed` prefixes (same scheme, host and port,
    and the prefix's path as whole segments), or, with `loopback`, when its host is this machine."""
    target = _parsed(url)
    if target is None:
        return False
    scheme, host, port, segments = target
    if loopback and _is_loopback(host):
        return True
    for prefix in allowed:
        base = _parsed(prefix.strip())
        if base is not None and base[:3] == (scheme, host, port) and segments[:len(base[3])] == base[3]:
            return True
    return False


def check_can_call_judge_url(url: str, *, allowed: list[str], loopback: bool, field: str = "base_url") -> None:
    """Raise (exit 2 / HTTP 400) naming the URL and the setting when a judge may not call it."""
    if can_call_judge_url(url, allowed=allowed, loopback=loopback):
        return
    raise ServiceError("the judge's base URL is not allowed; nothing was written",
                       [Problem(judge_url_refusal(url, allowed=allowed, loopback=loopback), field=field)])


def judge_url_refusal(url: str, *, allowed: list[str], loopback: bool) -> str:
    """Why a judge may not call `url`, naming the setting that would allow it."""
    where = ", ".join(allowed) if allowed else "nothing"
    return (f"judge base URL {url!r} is outside JUDGE_ALLOWED_BASE_URLS (allowed: {where}"
            f"{'; and loopback addresses' if loopback else ''}); add its prefix to JUDGE_ALLOWED_BASE_URLS to allow it")
