"""The rules of calibration.policies, one truth table per can_x / check_can_x pair: can_x gives the row's
answer, and check_can_x raises ServiceError (exit code and HTTP status as the callers send them) where, and
only where, can_x is False. The role rules, which take a user and have no check, get a table of their own."""

from itertools import combinations

import pytest
from django.contrib.auth.models import AnonymousUser

from calibration import policies
from evalapp.errors import ServiceError
from tests.factories import UserFactory

ENG, ADJ, ANN, EXP = "engineer", "adjudicator", "annotator", "expert"
OPENAI = ["https://api.openai.com/v1"]
GPU_BOX = ["http://gpu-box:8001/v1"]


def assert_pair(can, check, args: tuple, facts: dict, allowed: bool, **check_only) -> ServiceError | None:
    """can(*args, **facts) is `allowed`; check(...) returns None when allowed and raises exactly ServiceError
    when not. Returns the raised error for further asserts."""
    assert can(*args, **facts) is allowed
    if allowed:
        assert check(*args, **facts, **check_only) is None
        return None
    with pytest.raises(Exception) as raised:
        check(*args, **facts, **check_only)
    assert type(raised.value) is ServiceError
    return raised.value


NO_REASON = "a forced grading needs a reason; it is recorded with the grading run"


def not_passed(status: str) -> str:
    return (
        f"the judge version's gate is {status!r}, not 'pass'; calibrate it first or force the grading with a "
        "reason (the force is recorded)"
    )


@pytest.mark.parametrize(
    "gate_status, force, reason, message",
    [
        ("pass", False, "", None),  # a passing gate grades, forced or not
        ("pass", False, "why not", None),
        ("pass", True, "", None),
        ("pass", True, "  ", None),
        ("pass", True, "rerun", None),
        ("fail", False, "", not_passed("fail")),
        ("fail", False, "judge retrained", not_passed("fail")),  # a reason alone does not force
        ("fail", True, "", NO_REASON),
        ("fail", True, "   ", NO_REASON),  # nor does a blank one
        ("fail", True, "judge retrained", None),
        ("unmeasured", False, "", not_passed("unmeasured")),
        ("unmeasured", False, "why", not_passed("unmeasured")),
        ("unmeasured", True, "", NO_REASON),
        ("unmeasured", True, "\t", NO_REASON),
        ("unmeasured", True, "no labels yet", None),
        ("stale", False, "", not_passed("stale")),
        ("stale", False, "why", not_passed("stale")),
        ("stale", True, "", NO_REASON),
        ("stale", True, " ", NO_REASON),
        ("stale", True, "labels moved", None),
    ],
)
def test_can_grade(gate_status, force, reason, message):
    error = assert_pair(
        policies.can_grade,
        policies.check_can_grade,
        (),
        {"gate_status": gate_status, "force": force, "reason": reason},
        message is None,
    )
    if error is None:
        return
    assert error.message == message
    if message == NO_REASON:
        assert (error.code, error.status) == (2, 400)
        assert [(p.field, p.message) for p in error.problems] == [("reason", "required when forcing")]
    else:
        assert (error.code, error.status, error.problems) == (1, 409, [])


@pytest.mark.parametrize(
    "url, allowed_prefixes, loopback, allowed",
    [
        # Under a prefix: same scheme, host (any case) and port, the prefix's path as whole segments.
        ("https://api.openai.com/v1", OPENAI, False, True),
        ("https://api.openai.com/v1/", OPENAI, False, True),
        ("https://api.openai.com/v1/chat/completions", OPENAI, False, True),
        ("https://API.OpenAI.com/v1", OPENAI, False, True),
        ("https://api.openai.com:443/v1", OPENAI, False, True),
        ("https://api.openai.com/v10", OPENAI, False, False),
        ("https://api.openai.com/", OPENAI, False, False),
        ("https://api.openai.com", OPENAI, False, False),
        ("http://api.openai.com/v1", OPENAI, False, False),
        ("https://api.openai.com:8443/v1", OPENAI, False, False),
        # Nothing a prefix test could be fooled by.
        ("https://api.openai.com.evil.com/v1", OPENAI, False, False),
        ("https://api.openai.com@evil.com/v1", OPENAI, False, False),
        ("https://evil.com@api.openai.com/v1", OPENAI, False, False),
        ("https://user:pw@api.openai.com/v1", OPENAI, False, False),
        ("https://api.openai.com/v1/../admin", OPENAI, False, False),
        ("https://api.openai.com/v1/%2e%2e/admin", OPENAI, False, False),
        ("https://api.openai.com/v1?next=x", OPENAI, False, False),
        ("https://api.openai.com/v1#x", OPENAI, False, False),
        ("ftp://api.openai.com/v1", OPENAI, False, False),
        ("api.openai.com/v1", OPENAI, False, False),
        ("", OPENAI, False, False),
        ("http://[not-a-host", OPENAI, False, False),
        # Loopback means loopback hosts, on any port, and only when it is on.
        ("http://127.0.0.1:8001/v1", [], True, True),
        ("http://127.9.9.9/v1", [], True, True),
        ("https://localhost:1234", [], True, True),
        ("http://LOCALHOST:1234/v1", [], True, True),
        ("http://[::1]:8000/v1", [], True, True),
        ("http://127.0.0.1.evil.com/v1", [], True, False),
        ("http://127.0.0.1@evil.com/v1", [], True, False),
        ("http://localhost.evil.com/v1", [], True, False),
        ("http://evil.com/127.0.0.1/v1", [], True, False),
        ("http://2130706433/v1", [], True, False),
        ("http://0.0.0.0:8000/v1", [], True, False),
        ("http://127.0.0.1:8001/v1", [], False, False),
        ("http://[::1]:8000/v1", [], False, False),
        ("http://127.0.0.1:8001/v1", OPENAI, True, True),
        ("https://evil.example/v1", OPENAI, True, False),
        # A port in the prefix must match; an empty list allows nothing.
        ("http://gpu-box:8001/v1/x", GPU_BOX, False, True),
        ("http://gpu-box:8002/v1", GPU_BOX, False, False),
        ("http://gpu-box/v1", GPU_BOX, False, False),
        ("http://gpu-box/anything", ["http://gpu-box/"], False, True),
        ("https://api.openai.com/v1", [], False, False),
        ("https://api.openai.com/v1", [" https://api.openai.com/v1 "], False, True),  # prefixes are stripped
        ("https://api.openai.com/v1", ["not a url", *OPENAI], False, True),  # a broken prefix is skipped
    ],
)
def test_can_call_judge_url(url, allowed_prefixes, loopback, allowed):
    error = assert_pair(
        policies.can_call_judge_url,
        policies.check_can_call_judge_url,
        (url,),
        {"allowed": allowed_prefixes, "loopback": loopback},
        allowed,
        field="param base_url",
    )
    if error is None:
        return
    where = ", ".join(allowed_prefixes) if allowed_prefixes else "nothing"
    assert error.message == "the judge's base URL is not allowed; nothing was written"
    assert [(p.field, p.message) for p in error.problems] == [
        (
            "param base_url",
            f"judge base URL {url!r} is outside JUDGE_ALLOWED_BASE_URLS (allowed: {where}"
            f"{'; and loopback addresses' if loopback else ''}); add its prefix to JUDGE_ALLOWED_BASE_URLS to allow it",
        )
    ]
    assert (error.code, error.status) == (2, 400)


def test_the_judge_url_refusal_names_the_field_it_is_given():
    with pytest.raises(ServiceError) as refused:
        policies.check_can_call_judge_url("https://evil.example/v1", allowed=OPENAI, loopback=False)
    assert refused.value.problems[0].field == "base_url"


ALL_ROLE_SETS = [set(c) for n in range(5) for c in combinations((ENG, ADJ, ANN, EXP), n)]


@pytest.mark.django_db
@pytest.mark.parametrize("roles", ALL_ROLE_SETS, ids=lambda roles: "+".join(sorted(roles)) or "none")
def test_only_engineers_manage_and_read_judges(roles):
    """Adjudicators settle items and see neither runs nor judges; experts and annotators neither."""
    user = UserFactory(roles=tuple(sorted(roles)))
    assert policies.can_manage_judges(user) is (ENG in roles)
    assert policies.can_read_judges(user) is (ENG in roles)


@pytest.mark.django_db
def test_superusers_hold_every_role_and_anonymous_users_none():
    admin = UserFactory(is_superuser=True)
    assert policies.can_manage_judges(admin) and policies.can_read_judges(admin)
    assert not policies.can_manage_judges(AnonymousUser()) and not policies.can_read_judges(AnonymousUser())


def test_every_pair_in_the_module_has_a_table_here():
    """A check_can_x added to calibration.policies without a truth table fails here."""
    pairs = sorted(name[len("check_can_") :] for name in dir(policies) if name.startswith("check_can_"))
    assert pairs == sorted(name[len("test_can_") :] for name in globals() if name.startswith("test_can_"))
