"""The pure rules of delivery: the retry table, the backoff, the URLs allowed, and the signature."""

import pytest

from evalapp.webhooks import policy
from evalapp.webhooks.signing import sign, verify


@pytest.mark.parametrize(
    ("status_code", "attempts", "outcome"),
    [
        (200, 1, "delivered"),
        (204, 8, "delivered"),
        (299, 3, "delivered"),
        (500, 1, "retry"),
        (503, 7, "retry"),
        (503, 8, "failed"),  # the last attempt
        (429, 1, "retry"),
        (429, 8, "failed"),
        (None, 1, "retry"),  # a timeout or a connection error
        (None, 8, "failed"),
        (400, 1, "failed"),  # a 4xx other than 429: at once
        (401, 1, "failed"),
        (404, 1, "failed"),
        (410, 1, "failed"),
        (301, 1, "failed"),  # redirects are not followed
    ],
)
def test_what_follows_an_attempt(status_code, attempts, outcome):
    assert policy.attempt_outcome(status_code=status_code, attempts=attempts, max_attempts=8) == outcome


def test_backoff_doubles_from_the_base_up_to_the_cap():
    waits = [policy.backoff_seconds(attempts=n, base=10) for n in range(1, 10)]
    assert waits == [10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0]
    assert policy.backoff_seconds(attempts=20, base=10) == 3600.0


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://hooks.example.org/evalapp", None),
        ("http://127.0.0.1:8080/hook", None),
        ("ftp://example.org/x", "only http:// and https:// URLs receive webhooks, not 'ftp://example.org/x'"),
        ("file:///etc/passwd", "only http:// and https:// URLs receive webhooks, not 'file:///etc/passwd'"),
        ("javascript:alert(1)", "only http:// and https:// URLs receive webhooks, not 'javascript:alert(1)'"),
        ("https:///nohost", "the URL names no host: 'https:///nohost'"),
        ("", "give the receiver's URL"),
        (None, "give the receiver's URL"),
    ],
)
def test_only_http_and_https_urls_with_a_host(url, problem):
    assert policy.url_problem(url) == problem


def test_the_signature_is_the_hex_hmac_sha256_of_timestamp_dot_body():
    # Worked with openssl: printf '1700000000.{"event":"ping"}' | openssl dgst -sha256 -hmac whsec-test
    expected = "sha256=18edb01b9146fe04b3de9e92ca1594f97bbf2547c75e7584f34d3bedfe76f0a6"
    assert sign("whsec-test", "1700000000", b'{"event":"ping"}') == expected
    assert verify("whsec-test", "1700000000", b'{"event":"ping"}', expected)
    assert not verify("whsec-test", "1700000001", b'{"event":"ping"}', expected)  # another timestamp
    assert not verify("other", "1700000000", b'{"event":"ping"}', expected)  # another secret
    assert not verify("whsec-test", "1700000000", b'{"event":"pong"}', expected)  # another body
