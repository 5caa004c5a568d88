"""Shared Playwright fixtures: Debian's Chromium, headless, against Django's live_server.

Every browser test lives under tests/e2e/, is marked `@pytest.mark.e2e` and
`@pytest.mark.django_db(transaction=True)` (the live server runs in another thread, so the data
must be committed to be seen).
"""

import os
from pathlib import Path

import pytest

from tests.e2e.shots import SCREENSHOTS

# pytest-playwright runs an event loop in the test thread; Django refuses ORM calls from a thread
# with a running loop unless told that this is fine (it is: the tests are not async code).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium rather than a downloaded build; no network chatter of its own."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture
def screenshot_dir() -> Path:
    """var/screenshots/ (git-ignored): where tests keep their screenshots as artefacts."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def login(live_server):
    """login(page, username, password): sign in through /login/ and wait to land on a signed-in page.

    Returns the page for chaining. Fails the test, naming the user, when the form does not accept them.
    """

    def _login(page, username: str, password: str):
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        with page.expect_navigation():
            page.click("button[type=submit]")
        if "/login/" in page.url:
            pytest.fail(f"login as {username!r} was refused")
        return page

    return _login


@pytest.fixture(autouse=True)
def _no_page_outlives_its_test(request):
    """Close whatever browser contexts a test opened and left open (`browser.new_context()` outside the
    `context` fixture, which closes its own): their pages would go on polling the session's live server
    into the tests after, on data that is no longer there."""
    browser = request.getfixturevalue("browser") if "browser" in request.fixturenames else None
    yield
    if browser is not None:
        for context in list(browser.contexts):
            context.close()
