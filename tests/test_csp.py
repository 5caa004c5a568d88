"""The Content-Security-Policy every page is served with, and templates that can live under it: no inline
script or event handler, no <style> block or style attribute, no htmx expression that needs eval.

(tests/e2e/test_csp.py opens every page in Chromium and checks that nothing is blocked.)"""
import re
from pathlib import Path

import pytest
from django.test import Client

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STRICT = {"default-src": ["'self'"], "script-src": ["'self'"], "style-src": ["'self'"], "img-src": ["'self'", "data:"],
          "font-src": ["'self'"], "connect-src": ["'self'"], "object-src": ["'none'"], "base-uri": ["'self'"],
          "frame-ancestors": ["'none'"], "form-action": ["'self'"]}


def directives(header: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in header.split(";")) if d}


@pytest.mark.django_db
def test_pages_are_served_with_the_strict_policy(make_user):
    assert directives(Client().get("/login/")["Content-Security-Policy"]) == STRICT
    client = Client()
    client.force_login(make_user("eng", "engineer"))
    home = client.get("/")
    assert home.status_code == 200 and directives(home["Content-Security-Policy"]) == STRICT
    assert home["X-Frame-Options"] == "DENY" and home["X-Content-Type-Options"] == "nosniff"
    assert home["Referrer-Policy"] == "same-origin"
    htmx = '<meta name="htmx-config" content=\'{"includeIndicatorStyles": false, "allowEval": false, "allowScriptTags": false}\'>'
    assert htmx in home.content.decode()


@pytest.mark.django_db
def test_the_swagger_page_keeps_the_strict_policy_and_loads_nothing_from_outside(make_user):
    client = Client()
    client.force_login(make_user("eng", "engineer"))
    docs = client.get("/api/docs/")
    assert directives(docs["Content-Security-Policy"]) == STRICT
    html = docs.content.decode()
    assert "cdn.jsdelivr.net" not in html and "<style" not in html
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert [s.rsplit("/", 1)[-1] for s in scripts] == ["swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
                                                       "?script="]
    assert all(s.startswith("/static/drf_spectacular_sidecar/") for s in scripts[:2])
    init = client.get(scripts[2].replace("&amp;", "&"))
    assert init.status_code == 200 and init["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in init.content.decode()
    assert directives(client.get("/api/schema/")["Content-Security-Policy"]) == STRICT


INLINE = {
    "inline <script>": re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    "event handler attribute": re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I),
    "style attribute": re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I),
    "<style> block": re.compile(r"<style[\s>]", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "hx-on handler": re.compile(r"\shx-on[:-]", re.I),
    "htmx trigger filter (eval)": re.compile(r"hx-trigger=\"[^\"]*\[", re.I),
    "htmx js: values (eval)": re.compile(r"hx-(vals|vars|headers)='?\"?\s*(js|javascript):", re.I),
}


@pytest.mark.parametrize("template", sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html")))
def test_templates_hold_nothing_the_policy_blocks(template):
    text = re.sub(r"\{#.*?#\}", "", (TEMPLATES / template).read_text(encoding="utf-8"), flags=re.S)
    found = {what: pattern.findall(text) for what, pattern in INLINE.items()}
    assert {what: hits for what, hits in found.items() if hits} == {}


def test_the_lint_catches_what_it_is_for():
    samples = {
        "inline <script>": "<script>alert(1)</script>",
        "event handler attribute": '<button type="button" onclick="go()">',
        "style attribute": '<span style="width: 5%">',
        "<style> block": "<style>.x{}</style>",
        "javascript: URL": '<a href="javascript:void(0)">',
        "hx-on handler": '<form hx-on::after-request="x()">',
        "htmx trigger filter (eval)": '<input hx-trigger="load[this.value.length>0]">',
        "htmx js: values (eval)": "<div hx-vals='js:{a: 1}'>",
    }
    for what, sample in samples.items():
        assert INLINE[what].search(sample), what
    assert not INLINE["inline <script>"].search('<script src="/static/x.js" defer></script>')
    assert not INLINE["inline <script>"].search('<script id="s" type="application/json">{}</script>')
