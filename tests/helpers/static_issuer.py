"""An issuer whose keys the test holds (SPEC §20's bad tokens): a small HTTP server in the test
process publishing OpenID discovery and a JWKS of RS256, ES256 and EdDSA keys, so a test can sign a
token that is valid but for one thing (expired, another audience, another issuer) — what the real
provider (tests/idp) will never issue. The faces fetch these keys over real HTTP, as from any IdP.
"""

from __future__ import annotations

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
