"""A local OpenID Connect provider for tests: a real socket and the real code flow, RS256 id tokens.

    /authorize  (GET) records the request and redirects to its redirect_uri with a one-time code and the state
    /token      (POST) trades the code (checked with the client id and secret, and the PKCE verifier) for an
                access token and an id token signed with the key generated when the server starts
    /userinfo   (GET, Bearer access token) the claims
    /jwks       the public key

Claims are read per request from `claims` (set them before the flow), so a test can change the groups
between two sign-ins as the provider's administrator would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLIENT_ID = "evalapp-test"
CLIENT_SECRET = "evalapp-test-secret"
KID = "test-key-1"


class OIDCProvider:
    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.claims: dict[str, Any] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.authorize_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/authorize":
                    provider._authorize(self, {k: v[0] for k, v in parse_qs(url.query).items()})
                elif url.path == "/userinfo":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    grant = provider.tokens.get(token)
                    if grant is None:
                        self._json(401, {"error": "invalid_token"})
                    else:
                        self._json(200, grant["claims"])
                elif url.path == "/jwks":
                    jwk = RSAAlgorithm.to_jwk(provider.key.public_key(), as_dict=True)
                    self._json(200, {"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]})
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlparse(self.path).path != "/token":
                    self._json(404, {"error": "not_found"})
                    return
                status, body = provider._token(form)
                self._json(status, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _authorize(self, handler: BaseHTTPRequestHandler, params: dict[str, str]) -> None:
        self.authorize_requests.append(params)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {**params, "claims": dict(self.claims)}
        target = params["redirect_uri"] + "?" + urlencode({"code": code, "state": params["state"]})
        handler.send_response(302)
        handler.send_header("Location", target)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.token_requests.append(form)
        grant = self.codes.pop(form.get("code", ""), None)  # one use only
        if grant is None or form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return 400, {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, {"error": "invalid_grant", "error_description": "redirect_uri differs"}
        if grant.get("code_challenge"):
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["code_challenge"]:
                return 400, {"error": "invalid_grant", "error_description": "PKCE verifier"}
        now = int(time.time())
        id_claims = {
            "iss": self.base,
            "aud": CLIENT_ID,
            "sub": grant["claims"].get("sub", "subject-1"),
            "iat": now,
            "exp": now + 300,
            "nonce": grant.get("nonce"),
        }
        id_token = jwt.encode(id_claims, self.key, algorithm="RS256", headers={"kid": KID})
        access = secrets.token_urlsafe(16)
        self.tokens[access] = grant
        return 200, {"access_token": access, "token_type": "Bearer", "expires_in": 300, "id_token": id_token}

    def settings(self) -> dict[str, Any]:
        """The Django settings that point evalapp at this provider."""
        return {
            "OIDC_ENABLED": True,
            "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.base}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.base}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.base}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.base}/jwks",
            "OIDC_RP_SIGN_ALGO": "RS256",
        }

    def __enter__(self) -> OIDCProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
