"""Fixtures shared by every test: users by role, API clients, and a small corpus + labelled set."""

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from annotation.services.users import user_upsert

CHROMIUM = "/usr/bin/chromium"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The real-worker tests run one after another in one test process (`--dist loadgroup`): each starts a
    broker, a judge server and worker processes of its own, and two at once on a 2-core machine would wait on
    each other. Browser tests need Debian's Chromium; say so instead of failing where it is not installed."""
    for item in items:
        if item.nodeid.startswith("tests/celery/"):
            item.add_marker(pytest.mark.xdist_group("real_workers"))
    if Path(CHROMIUM).exists() or shutil.which("chromium"):
        return
    skip = pytest.mark.skip(reason=f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Counters kept in the cache (failed API tokens per address) start at zero in every test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def postgres_only(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")


def write_jsonl(path: Path, rows: list) -> Path:
    """Write rows (dicts, or raw strings for malformed lines) as JSON Lines."""
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def run_cmd(*args):
    import io

    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.fixture
def fetch_within(client, django_assert_max_num_queries):
    """`fetch(url, bound)`: GET a page with the test's `client` twice (the session and the caches warm on the
    first) and the second time within `bound` SQL statements, asserting a 200. The two-size statement
    tests fetch each page over a small and a larger world under the same bound."""

    def fetch(url: str, bound: int):
        client.get(url)
        with django_assert_max_num_queries(bound):
            response = client.get(url)
        assert response.status_code == 200, response.content[:300]
        return response

    return fetch


@pytest.fixture
def make_user(db):
    def make(username: str, *roles: str, password: str = "pw-" + "x" * 8):
        result = user_upsert(username=username, roles=list(roles), password=password)
        from django.contrib.auth import get_user_model

        return get_user_model().objects.get(username=result.username)

    return make


@pytest.fixture
def api_client_for(make_user):
    """An authenticated DRF client for a fresh user holding the given roles (token auth, as scripts use)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def client(username: str, *roles: str):
        user = make_user(username, *roles)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
        api.user = user
        return api

    return client


CORPUS = [
    {
        "doc_id": "confluence:PRICE/8821",
        "title": "Legacy plans",
        "source": "confluence",
        "text": "Plans sold before 2024 are legacy plans.\n\n"
        "Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert.\n\n"
        "Legacy Team plans bill monthly.",
    },
    {
        "doc_id": "confluence:SEC/12",
        "title": "Security",
        "source": "confluence",
        "text": "Passwords rotate every ninety days.\n\nSingle sign-on is available on Enterprise plans.",
    },
]


def question(qid: str, **fields) -> dict:
    record = {"qid": qid, "question": f"question {qid}", "stratum": "policy_lookup"}
    record.update(fields)
    return record


QUESTIONS = [
    question(
        "q-0001",
        gold_doc_id="confluence:PRICE/8821",
        gold_chunk_id="confluence:PRICE/8821#0001",
        gold_text="Legacy Enterprise trials run for thirty (30) days from activation and do not auto-convert.",
        expected="30 days",
        grading="rubric",
    ),
    question(
        "q-0002",
        gold_doc_id="confluence:SEC/12",
        gold_chunk_id="confluence:SEC/12#0000",
        gold_text="Passwords rotate every ninety days.",
        expected="90 days",
        grading="extraction",
    ),
    question("q-0003", stratum="no_answer", gold_doc_id=None, gold_chunk_id=None, gold_text=None, team="billing"),
]


@pytest.fixture
def corpus_file(tmp_path):
    return write_jsonl(tmp_path / "corpus.jsonl", CORPUS)


@pytest.fixture
def questions_file(tmp_path):
    return write_jsonl(tmp_path / "questions.jsonl", QUESTIONS)


@pytest.fixture
def loaded(db, corpus_file, questions_file):
    """The small corpus and the `support` dataset (version 1) imported through the services."""
    from annotation.services.corpus import corpus_import
    from annotation.services.datasets import questions_import

    corpus_import(path=corpus_file)
    return questions_import(path=questions_file, dataset_name="support")


# CI runs the property tests on a fixed stream of examples, so a run is reproducible; locally they explore.
from hypothesis import settings as hypothesis_settings  # noqa: E402

hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if __import__("os").environ.get("CI"):
    hypothesis_settings.load_profile("ci")
