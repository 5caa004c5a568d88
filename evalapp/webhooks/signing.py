"""The signature of a webhook body, for the sender and for receivers (no Django).

A receiver verifies a delivery with `verify(secret, timestamp, body, signature)`, given the raw body and
the X-Evalapp-Timestamp and X-Evalapp-Signature headers: the signature is
`sha256=` + hex HMAC-SHA256 of `"{timestamp}.{body}"` with the webhook's secret. Checking the timestamp
is recent (say within five minutes) as well stops a captured delivery being replayed later.
"""

import hashlib
import hmac


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The X-Evalapp-Signature header of a body sent at `timestamp` (Unix seconds, as text)."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """True when `signature` is the signature of `body` at `timestamp` with `secret` (compared in constant time)."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)
