"""An issuer whose keys the test holds (SPEC §20's bad tokens): a small HTTP server in the test
process publishing OpenID discovery and a JWKS of RS256, ES256 and EdDSA keys, so a test can sign a
token that is valid but for one thing (expired, another audience, another issuer) — what the real
provider (tests/idp) will never issue. The faces fetch these keys over real HTTP, as from any IdP.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def _keys() -> dict[str, Any]:
    return {
        "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ES256": ec.generate_private_key(ec.SECP256R1()),
        "EdDSA": ed25519.Ed25519PrivateKey.generate(),
    }


@dataclass
class StaticIssuer:
    issuer: str
    keys: dict[str, Any] = field(default_factory=_keys)
    published: bool = True  # False: the JWKS answers 503 (a provider that is down)
    fetches: int = 0  # how many times the JWKS was asked for

    def jwks(self) -> dict[str, Any]:
        found = []
        for alg, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.get_default_algorithms()[alg].to_jwk(key.public_key()))
            found.append({**jwk, "kid": f"kid-{alg}", "alg": alg, "use": "sig"})
        return {"keys": found}

    def token(self, audience: str, *, alg: str = "RS256", kid: str | None = None, **claims: Any) -> str:
        """A token of this issuer for `audience`, valid for 10 minutes unless `claims` say otherwise."""
        now = int(time.time())
        body = {"iss": self.issuer, "aud": audience, "sub": "ana@example.com", "iat": now, "exp": now + 600,
                "scope": "colibri:read colibri:write"}  # fmt: skip
        body.update(claims)
        body = {key: value for key, value in body.items() if value is not None}
        return jwt.encode(body, self.keys[alg], algorithm=alg, headers={"kid": kid or f"kid-{alg}"})


@contextmanager
def static_issuer() -> Iterator[StaticIssuer]:
    state: list[StaticIssuer] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            issuer = state[0]
            if self.path == "/.well-known/openid-configuration":
                body: object = {"issuer": issuer.issuer, "jwks_uri": f"{issuer.issuer}/jwks"}
            elif self.path == "/jwks" and issuer.published:
                issuer.fetches += 1
                body = issuer.jwks()
            else:
                self.send_error(404 if self.path != "/jwks" else 503)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.append(StaticIssuer(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _b64(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _hs256_with_public_key(issuer: StaticIssuer, audience: str) -> str:
    """An HS256 token whose "secret" is the issuer's published RSA key: refused, never verified."""
    public = issuer.keys["RS256"].public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    now = int(time.time())
    head = _b64({"alg": "HS256", "typ": "JWT", "kid": "kid-RS256"})
    body = _b64({"iss": issuer.issuer, "aud": audience, "sub": "eve", "exp": now + 600})
    signature = hmac.new(public, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def bad_tokens(issuer: StaticIssuer, audience: str) -> dict[str, tuple[str, str]]:
    """Each way a token must be refused: its name -> (the token, what the log says of it)."""
    now = int(time.time())
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    unknown = jwt.encode({"iss": issuer.issuer, "aud": audience, "sub": "eve", "exp": now + 600}, stranger,
                         algorithm="RS256", headers={"kid": "kid-RS256"})  # fmt: skip
    return {
        "signed by an unknown key": (unknown, "the signature does not verify"),
        "unknown kid": (issuer.token(audience, kid="kid-nobody"), "does not publish"),
        "wrong iss": (issuer.token(audience, iss="http://elsewhere.example"), "its iss is not"),
        "wrong aud": (issuer.token(f"{audience}/other"), "its aud does not contain"),
        "expired": (issuer.token(audience, exp=now - 3600), "expired"),
        "not yet valid": (issuer.token(audience, nbf=now + 3600), "not valid yet"),
        "alg as a list": (
            f"{_b64({'alg': ['RS256'], 'typ': 'JWT'})}.{_b64({'sub': 'eve'})}.c2ln",
            "is refused",
        ),
        "alg none": (f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({'sub': 'eve'})}.", "'none' is refused"),
        "HS256 with the public key": (_hs256_with_public_key(issuer, audience), "'HS256' is refused"),
        "no exp": (issuer.token(audience, exp=None), 'missing the "exp" claim'),
        "reserved principal": (issuer.token(audience, sub="local"), "reserved"),
        "a group's name as principal": (issuer.token(audience, sub="group:sre"), "reserved"),
        "over-long principal": (issuer.token(audience, sub="a" * 257), "printable name"),
        "not a JWT": ("not-a-token", "not a JWT"),
    }
