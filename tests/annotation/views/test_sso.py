"""Single sign-on against a real local OpenID Connect provider (tests/oidc_provider.py): the whole code
flow through Django's test client, the roles mapped from the groups claim on every sign-in, refusals that
write nothing, and SSO off by default."""

from urllib.error import HTTPError
from urllib.parse import urlparse
from urllib.request import HTTPRedirectHandler, Request, build_opener

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from evalapp.roles import user_roles
from tests.oidc_provider import OIDCProvider

ROLE_MAP = "evalapp-engineers=engineer,evalapp-annotators=annotator,evalapp-annotators=adjudicator"
BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "annotation.sso.RoleMappingBackend",
]


class _NoRedirect(HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture
def provider(settings):
    with OIDCProvider() as op:
        for name, value in op.settings().items():
            setattr(settings, name, value)
        settings.OIDC_ROLE_MAP = ROLE_MAP
        settings.AUTHENTICATION_BACKENDS = BACKENDS
        # As production has it: the lockout backend first, and it must let a provider's sign-in through.
        settings.AXES_ENABLED = True
        yield op


def provider_redirect(client: Client, next_url: str | None = None) -> str:
    """Start at /oidc/authenticate/ and let the provider answer the browser's visit: the callback path and
    query it sends the browser back to."""
    start = client.get("/oidc/authenticate/", {"next": next_url} if next_url else {})
    assert start.status_code == 302, start.content[:300]
    try:
        build_opener(_NoRedirect).open(Request(start["Location"]))
        raise AssertionError("the provider did not redirect back")
    except HTTPError as exc:  # the 302 it was told not to follow
        back = urlparse(exc.headers["Location"])
    assert back.path == "/oidc/callback/"
    return back.path + "?" + back.query


def sso_sign_in(client: Client, next_url: str | None = None):
    """The whole flow: to the provider and back to the callback."""
    return client.get(provider_redirect(client, next_url))


def signed_in(client: Client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id) if user_id else None


def snapshot():
    User = get_user_model()
    return (
        sorted(User.objects.values_list("username", "email", "password")),
        sorted(User.groups.through.objects.values_list("user__username", "group__name")),
    )


@pytest.mark.django_db
def test_the_whole_flow_signs_in_with_the_mapped_roles(provider):
    provider.claims = {
        "sub": "abc-1",
        "preferred_username": "Alice",
        "email": "alice@example.org",
        "groups": ["evalapp-annotators", "staff"],
    }
    client = Client()

    response = sso_sign_in(client, next_url="/queues/")

    assert response.status_code == 302 and response["Location"] == "/queues/"
    user = signed_in(client)
    assert (user.username, user.email, user.has_usable_password()) == ("Alice", "alice@example.org", False)
    assert user_roles(user) == {"annotator", "adjudicator"}
    asked = provider.authorize_requests[0]
    assert (asked["client_id"], asked["response_type"], asked["code_challenge_method"]) == (
        "evalapp-test",
        "code",
        "S256",
    )
    assert asked["redirect_uri"] == "http://testserver/oidc/callback/"
    # Signed in for real: a page that needs the role opens.
    assert client.get("/queues/").status_code == 200


@pytest.mark.django_db
def test_a_role_changed_at_the_provider_is_applied_at_the_next_sign_in(provider):
    provider.claims = {"preferred_username": "bob", "email": "bob@example.org", "groups": ["evalapp-annotators"]}
    sso_sign_in(Client())
    provider.claims = {"preferred_username": "bob", "email": "bob@example.org", "groups": ["evalapp-engineers"]}

    client = Client()
    sso_sign_in(client)

    user = get_user_model().objects.get(username="bob")
    assert signed_in(client) == user
    assert sorted(user.groups.values_list("name", flat=True)) == ["engineer"]
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_no_mapped_role_is_refused_and_nobody_is_created(provider):
    provider.claims = {"preferred_username": "carol", "email": "carol@example.org", "groups": ["staff"]}
    client = Client()

    response = sso_sign_in(client)

    page = response.content.decode()
    assert response.status_code == 403
    assert "Your account at the sign-in provider holds no evalapp role." in page
    assert "None of your groups is mapped to a role (OIDC_ROLE_MAP); ask an engineer to add you to one." in page
    assert signed_in(client) is None
    assert get_user_model().objects.count() == 0
    assert Group.objects.count() == 0


@pytest.mark.django_db
def test_losing_every_role_at_the_provider_refuses_and_leaves_the_user_as_it_was(provider):
    provider.claims = {"preferred_username": "dan", "email": "dan@example.org", "groups": ["evalapp-engineers"]}
    sso_sign_in(Client())
    before = snapshot()
    provider.claims = {"preferred_username": "dan", "email": "dan@example.org", "groups": []}

    client = Client()
    response = sso_sign_in(client)

    assert response.status_code == 403 and signed_in(client) is None
    assert snapshot() == before


@pytest.mark.django_db
def test_a_password_account_with_another_email_is_not_taken_over(provider, make_user):
    owner = make_user("erin", "engineer")
    owner.email = "erin@old.example"
    owner.save()
    before = snapshot()
    provider.claims = {"preferred_username": "ERIN", "email": "mallory@example.org", "groups": ["evalapp-annotators"]}
    client = Client()

    response = sso_sign_in(client)

    page = response.content.decode()
    assert response.status_code == 403
    assert "This user name belongs to an account that signs in with a password." in page
    assert signed_in(client) is None
    assert snapshot() == before


@pytest.mark.django_db
def test_a_password_account_with_the_same_email_is_the_same_person(provider, make_user):
    owner = make_user("frank", "engineer")
    owner.email = "Frank@Example.org"
    owner.save()
    provider.claims = {"preferred_username": "Frank", "email": "frank@example.org", "groups": ["evalapp-annotators"]}
    client = Client()

    sso_sign_in(client)

    owner.refresh_from_db()
    assert signed_in(client) == owner
    # Matched case-insensitively; the provider now decides the roles, and the password still works.
    assert sorted(owner.groups.values_list("name", flat=True)) == ["adjudicator", "annotator"]
    assert owner.has_usable_password() and get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_a_forged_callback_is_refused_without_a_sign_in(provider):
    client = Client()
    client.get("/oidc/authenticate/")

    response = client.get("/oidc/callback/", {"code": "made-up", "state": "not-issued"})

    assert response.status_code == 400
    assert "The sign-in could not be verified" in response.content.decode()
    assert signed_in(client) is None and provider.token_requests == []


@pytest.mark.django_db
def test_a_code_used_twice_is_refused(provider):
    provider.claims = {"preferred_username": "gus", "email": "gus@example.org", "groups": ["evalapp-engineers"]}
    client = Client()
    back = provider_redirect(client)
    assert client.get(back).status_code == 302
    client.logout()

    replay = client.get(back)

    # Signed out, the session no longer holds the state: refused before the provider is asked again.
    assert replay.status_code == 403 and "Single sign-on did not sign you in" in replay.content.decode()
    assert signed_in(client) is None and len(provider.token_requests) == 1


@pytest.mark.django_db
def test_the_login_page_shows_the_sso_button_beside_the_password_form(provider):
    page = Client().get("/login/").content.decode()

    assert 'data-testid="sso-sign-in" href="/oidc/authenticate/"' in page
    assert 'name="password"' in page


@pytest.mark.django_db
def test_oidc_only_hides_and_refuses_the_password_form(provider, settings, make_user):
    settings.OIDC_ONLY = True
    make_user("hana", "engineer")
    client = Client()

    page = client.get("/login/").content.decode()
    refused = client.post("/login/", {"username": "hana", "password": "pw-" + "x" * 8})

    assert "Sign in with SSO" in page and 'name="password"' not in page
    assert refused.status_code == 403 and "Password sign-in is off here" in refused.content.decode()
    assert signed_in(client) is None


@pytest.mark.django_db
def test_password_sign_in_still_works_with_sso_on(provider, make_user):
    make_user("ivan", "engineer")
    client = Client()

    response = client.post("/login/", {"username": "ivan", "password": "pw-" + "x" * 8})

    assert response.status_code == 302 and signed_in(client).username == "ivan"


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/oidc/authenticate/", "/oidc/callback/?code=x&state=y"])
def test_sso_is_off_by_default(client, url):
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_the_login_page_has_no_sso_button_by_default(client):
    page = client.get("/login/").content.decode()

    assert "Sign in with SSO" not in page and 'name="password"' in page


@pytest.mark.django_db
def test_refused_sso_sign_ins_never_lock_the_address(provider):
    from axes.models import AccessAttempt

    provider.claims = {"preferred_username": "jo", "email": "jo@example.org", "groups": ["staff"]}
    statuses = [sso_sign_in(Client()).status_code for _ in range(6)]
    provider.claims = {"preferred_username": "kim", "email": "kim@example.org", "groups": ["evalapp-engineers"]}
    client = Client()

    sso_sign_in(client)

    # The provider checked the credentials; a refusal of its user is no guess for axes to count.
    assert statuses == [403] * 6 and AccessAttempt.objects.count() == 0
    assert signed_in(client).username == "kim"


@pytest.mark.django_db
def test_wrong_passwords_still_lock_the_account_with_sso_on(provider, make_user):
    make_user("lena", "engineer")
    for n in range(5):
        Client().post("/login/", {"username": "lena", "password": f"wrong-{n}"})
    client = Client()

    locked = client.post("/login/", {"username": "lena", "password": "pw-" + "x" * 8})

    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.content.decode()
    assert signed_in(client) is None


@pytest.mark.django_db
def test_a_code_the_provider_refuses_is_a_page_not_a_500(provider):
    provider.claims = {"preferred_username": "max", "email": "max@example.org", "groups": ["evalapp-engineers"]}
    client = Client()
    back = provider_redirect(client)
    provider.codes.clear()  # expired at the provider

    response = client.get(back)

    page = response.content.decode()
    assert response.status_code == 502
    assert "The sign-in provider refused to complete the sign-in" in page and "answered HTTP 400" in page
    assert signed_in(client) is None and get_user_model().objects.count() == 0


@pytest.mark.django_db
def test_a_provider_that_went_away_is_a_page_not_a_500(provider, settings):
    provider.claims = {"preferred_username": "ned", "email": "ned@example.org", "groups": ["evalapp-engineers"]}
    client = Client()
    back = provider_redirect(client)
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/token"  # the discard port: nothing listens

    response = client.get(back)

    assert response.status_code == 502 and "The sign-in provider did not answer" in response.content.decode()
    assert signed_in(client) is None and get_user_model().objects.count() == 0


@pytest.mark.django_db
def test_the_provider_sending_an_error_back_is_refused(provider):
    client = Client()
    client.get("/oidc/authenticate/")

    response = client.get("/oidc/callback/", {"error": "access_denied", "state": "s"})

    assert (
        response.status_code == 403 and "The provider answered &#x27;access_denied&#x27;." in response.content.decode()
    )
    assert signed_in(client) is None
