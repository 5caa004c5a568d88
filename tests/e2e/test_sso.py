"""In Chromium, under the real Content-Security-Policy: the sign-in page with "Sign in with SSO", and the
button taking the browser through a real local OpenID Connect provider and back, signed in with its roles."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from tests.oidc_provider import OIDCProvider

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
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
    assert [v["id"] for v in Axe().run(page, options=WCAG_AA).response["violations"]] == []

    button.click()

    page.wait_for_url(f"{live_server.url}/queues/")
    expect(page.locator("body")).to_contain_text("ada")
    assert page.evaluate("window.__csp") == [] and errors == []
    page.close()


def test_the_refusal_page_in_chromium(provider, live_server, browser, screenshot_dir):
    provider.claims = {"preferred_username": "bea", "email": "bea@example.org", "groups": ["staff"]}
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(WATCH)

    page.goto(f"{live_server.url}/login/")
    page.get_by_role("link", name="Sign in with SSO").click()

    expect(page.get_by_test_id("sso-refused")).to_have_text(
        "Your account at the sign-in provider holds no evalapp role."
    )
    page.screenshot(path=screenshot_dir / "sso-refused-1280.png")
    assert page.evaluate("window.__csp") == []
    assert [v["id"] for v in Axe().run(page, options=WCAG_AA).response["violations"]] == []
    page.close()
