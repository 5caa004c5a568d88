"""/api/docs/ renders Swagger UI in Chromium with every request outside the app refused: the UI is the
installed sidecar's, and nothing the strict policy blocks is on the page."""

from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from annotation.services.users import user_upsert

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-" + "x" * 8


def test_api_docs_render_offline_under_the_strict_policy(page, live_server, login, screenshot_dir):
    user_upsert(username="eng", roles=["engineer"], password=PASSWORD)
    app = urlsplit(live_server.url).netloc
    outside: list[str] = []

    def only_the_app(route):
        if urlsplit(route.request.url).netloc == app:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_app)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    login(page, "eng", PASSWORD)

    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=20_000)

    assert page.locator(".opblock").count() > 40
    assert page.locator(".info .title").inner_text().startswith("evalapp API")
    assert outside == [] and errors == []
    page.screenshot(path=str(screenshot_dir / "api_docs.png"))
    assert get_user_model().objects.filter(username="eng").exists()
