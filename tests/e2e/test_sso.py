"""In Chromium, under the real Content-Security-Policy: the sign-in page with "Sign in with SSO", and the
button taking the browser through a real local OpenID Connect provider and back, signed in with its roles."""

import pytest
from playwright.sync_api import expect

from tests.oidc_provider import OIDCProvider

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.effectiveDirective));
"""


@pytest.fixture
def provider(settings):
    with OIDCProvider() as op:
        for name, value in op.settings().items():
            setattr(settings, name, value)
        settings.OIDC_ROLE_MAP = "evalapp-annotators=annotator"
        settings.AUTHENTICATION_BACKENDS = [
            "axes.backends.AxesStandaloneBackend",
            "django.contrib.auth.backends.ModelBackend",
            "annotation.sso.RoleMappingBackend",
        ]
        yield op


def test_sign_in_with_sso_from_the_login_page(provider, live_server, browser, screenshot_dir):
    provider.claims = {"preferred_username": "ada", "email": "ada@example.org", "groups": ["evalapp-annotators"]}
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(WATCH)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_server.url}/queues/")
    button = page.get_by_role("link", name="Sign in with SSO")
    expect(button).to_be_visible()
    expect(page.locator("#id_password")).to_be_visible()
    page.screenshot(path=screenshot_dir / "sso-login-1280.png")
    assert page.evaluate("window.__csp") == [] and errors == []

    button.click()

    page.wait_for_url(f"{live_server.url}/queues/")
    expect(page.locator("body")).to_contain_text("ada")
    assert page.evaluate("window.__csp") == [] and errors == []
    page.close()
