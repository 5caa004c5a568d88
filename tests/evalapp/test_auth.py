"""Repeated failed sign-ins lock an account from an address (django-axes); repeated bad API tokens from an
address answer 429 with Retry-After (counted in the cache)."""

import time

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

PASSWORD = "pw-" + "x" * 8
LOCKED = "Too many failed sign-ins"


@pytest.fixture
def axes_on(settings):
    """The test settings keep axes off (tests sign in a lot); these tests turn it on as production has it."""
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    return settings


def sign_in(client, username, password, ip="127.0.0.1", url="/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)


def signed_in_as(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


@pytest.mark.django_db
def test_sixth_attempt_is_refused_even_with_the_right_password(axes_on, make_user):
    make_user("alice", "engineer")
    client = Client()
    for n in range(4):
        response = sign_in(client, "alice", f"wrong-{n}")
        assert response.status_code == 200 and "didn't match" in response.content.decode()
    fifth = sign_in(client, "alice", "wrong-4")
    assert fifth.status_code == 429 and LOCKED in fifth.content.decode()

    sixth = sign_in(client, "alice", PASSWORD)

    page = sixth.content.decode()
    assert sixth.status_code == 429
    assert LOCKED in page and "Try again in 15 minutes" in page
    assert signed_in_as(client) is None
    # The refused sixth attempt counts as a failure too (and starts the cool-off again).
    assert AccessAttempt.objects.get(username="alice", ip_address="127.0.0.1").failures_since_start == 6


@pytest.mark.django_db
def test_the_lock_is_per_account_and_address(axes_on, make_user):
    make_user("alice", "engineer")
    make_user("bob", "engineer")
    for n in range(5):
        sign_in(Client(), "alice", f"wrong-{n}")

    other_user_same_ip, same_user_other_ip = Client(), Client()
    assert sign_in(other_user_same_ip, "bob", PASSWORD).status_code == 302
    assert sign_in(same_user_other_ip, "alice", PASSWORD, ip="127.0.0.2").status_code == 302
    assert (signed_in_as(other_user_same_ip), signed_in_as(same_user_other_ip)) == ("bob", "alice")


@pytest.mark.django_db
def test_the_limit_and_cool_off_come_from_settings(axes_on, make_user):
    from datetime import timedelta

    axes_on.AXES_FAILURE_LIMIT = 2
    axes_on.AXES_COOLOFF_TIME = timedelta(minutes=3)
    make_user("alice", "engineer")
    assert sign_in(Client(), "alice", "wrong").status_code == 200
    second = sign_in(Client(), "alice", "wrong")
    assert second.status_code == 429 and "Try again in 3 minutes" in second.content.decode()


@pytest.mark.django_db
def test_the_admin_login_is_locked_too(axes_on, make_user):
    user = make_user("root", "engineer")
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    for n in range(5):
        sign_in(client, "root", f"wrong-{n}", url="/admin/login/")

    response = sign_in(client, "root", PASSWORD, url="/admin/login/")

    assert response.status_code == 429 and LOCKED in response.content.decode()
    assert signed_in_as(client) is None


def test_production_settings_wire_axes_in():
    from django.conf import settings

    assert "axes" in settings.INSTALLED_APPS
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]


# --- API tokens ---------------------------------------------------------------------------------------


def api(ip: str, token: str) -> APIClient:
    client = APIClient(REMOTE_ADDR=ip)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


@pytest.mark.django_db
def test_bad_tokens_past_the_limit_get_429_while_a_good_token_elsewhere_works(settings, make_user):
    settings.API_TOKEN_FAILURE_LIMIT = 5
    user = make_user("eng", "engineer")
    good = Token.objects.get(user=user).key
    attacker = api("127.0.0.3", "wrong")

    assert [attacker.get("/api/runs/").status_code for _ in range(5)] == [401] * 5
    refused = attacker.get("/api/runs/")

    assert refused.status_code == 429
    assert 895 <= int(refused["Retry-After"]) <= 900
    assert "too many failed token attempts from this address" in refused.json()["detail"]
    # From the locked address even the right token waits: the lock must not answer whether a guess was right.
    assert api("127.0.0.3", good).get("/api/runs/").status_code == 429
    assert api("127.0.0.4", good).get("/api/runs/").status_code == 200


@pytest.mark.django_db
def test_the_token_lock_ends_after_the_cool_off(settings, make_user, monkeypatch):
    settings.API_TOKEN_FAILURE_LIMIT = 2
    good = Token.objects.get(user=make_user("eng", "engineer")).key
    attacker = api("127.0.0.3", "wrong")
    assert [attacker.get("/api/runs/").status_code for _ in range(3)] == [401, 401, 429]

    later = time.time() + 15 * 60 + 1
    monkeypatch.setattr(time, "time", lambda: later)

    assert api("127.0.0.3", good).get("/api/runs/").status_code == 200
    assert attacker.get("/api/runs/").status_code == 401


@pytest.mark.django_db
def test_good_tokens_and_sessions_are_never_counted(settings, make_user):
    settings.API_TOKEN_FAILURE_LIMIT = 2
    user = make_user("eng", "engineer")
    good = api("127.0.0.3", Token.objects.get(user=user).key)
    assert {good.get("/api/runs/").status_code for _ in range(5)} == {200}
    session = Client(REMOTE_ADDR="127.0.0.3")
    session.force_login(user)
    assert {session.get("/api/runs/").status_code for _ in range(3)} == {200}
    anonymous = APIClient(REMOTE_ADDR="127.0.0.3")
    assert {anonymous.get("/api/runs/").status_code for _ in range(3)} == {401}


@pytest.mark.django_db
def test_forwarded_for_is_ignored_unless_a_proxy_is_trusted(settings, make_user):
    settings.API_TOKEN_FAILURE_LIMIT = 2
    settings.TRUSTED_PROXY_COUNT = 0
    spoofing = [api("127.0.0.3", "wrong") for _ in range(3)]
    codes = [c.get("/api/runs/", HTTP_X_FORWARDED_FOR=f"127.0.1.{n}").status_code for n, c in enumerate(spoofing)]
    assert codes == [401, 401, 429]

    settings.TRUSTED_PROXY_COUNT = 1
    behind_proxy = api("127.0.0.9", "wrong")
    assert behind_proxy.get("/api/runs/", HTTP_X_FORWARDED_FOR="127.0.2.1").status_code == 401
    assert behind_proxy.get("/api/runs/", HTTP_X_FORWARDED_FOR="127.0.2.2").status_code == 401
    assert behind_proxy.get("/api/runs/", HTTP_X_FORWARDED_FOR="127.0.2.1").status_code == 401
    assert behind_proxy.get("/api/runs/", HTTP_X_FORWARDED_FOR="127.0.2.1").status_code == 429


def test_the_cache_is_local_memory_unless_redis_is_configured(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def backend(**extra):
        env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "CELERY_BROKER_URL")}
        env.update({"EVALAPP_VAR_DIR": str(tmp_path), **extra})
        code = (
            "import os, json; os.environ['DJANGO_SETTINGS_MODULE']='evalapp.settings.base'; "
            "from django.conf import settings; c = settings.CACHES['default']; "
            "print(json.dumps([c['BACKEND'].rsplit('.', 1)[1], c.get('LOCATION')]))"
        )
        result = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    assert backend()[0] == "LocMemCache"
    assert backend(CELERY_BROKER_URL="redis://r:6379/3") == ["RedisCache", "redis://r:6379/3"]
    assert backend(CELERY_BROKER_URL="redis://r:6379/3", CACHE_URL="redis://c:6379/5") == [
        "RedisCache",
        "redis://c:6379/5",
    ]


@pytest.mark.django_db
def test_the_token_lookup_answers_as_drfs_in_one_statement(make_user, django_assert_num_queries):
    """Written as SQL for speed, the lookup gives DRF's own answers: the user and the token (every field as
    the ORM reads it), and the same refusals for an unknown token and an inactive user."""
    from rest_framework import authentication, exceptions

    from evalapp.auth import TokenAuthentication

    def fields(instance):
        return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}

    def outcome(auth, key):
        try:
            user, token = auth.authenticate_credentials(key)
        except exceptions.AuthenticationFailed as refused:
            return ("refused", str(refused.detail))
        return (fields(user), fields(token), token.user is user)

    user = make_user("eng", "engineer")
    quiet = make_user("gone", "engineer")
    get_user_model().objects.filter(pk=quiet.pk).update(is_active=False)
    keys = [Token.objects.get(user=user).key, Token.objects.get(user=quiet).key, "no-such-token", ""]
    ours, drfs = TokenAuthentication(), authentication.TokenAuthentication()
    expected = [outcome(drfs, key) for key in keys]
    with django_assert_num_queries(len(keys)):
        got = [outcome(ours, key) for key in keys]
    assert got == expected
    assert [e[0] if isinstance(e[0], str) else "user" for e in expected] == ["user", "refused", "refused", "refused"]
    assert expected[1] == ("refused", "User inactive or deleted.")
    assert expected[2] == ("refused", "Invalid token.")
    assert got[0][0]["username"] == "eng"
