"""A real identity provider for the OAuth tests (SPEC §20): tests/idp/provider.mjs, panva's
oidc-provider pinned in tests/idp/package-lock.json, started on a free port of 127.0.0.1.

    with identity_provider() as idp:
        token = idp.client_credentials_token("http://127.0.0.1:PORT/mcp")
        idp.rotate_keys()

Without node or the npm install a test skips with the reason, except under CI (`CI=true`), where it
fails (tests/helpers/node.py). oidc-provider 9 warns that it wants Node.js 22, but everything the
suite uses works on the machine's Node.js 20, so it runs there (no `make node22` needed).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import secrets
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx2

from tests.helpers import node as node_support

IDP = Path(__file__).resolve().parent.parent / "idp"
PACKAGES = ("oidc-provider", "jose")
READY_TIMEOUT = 30.0

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SCOPES = "colibri:read colibri:write"
# The users the provider knows, with their groups (any password signs them in).
USERS = {"ana@example.com": ("sre",), "bob@example.com": ("dev",)}


@dataclass(frozen=True)
class AuthorizationRequest:
    """Where a browser starts a sign-in, and what redeeming its code needs."""

    url: str
    resource: str
    state: str
    verifier: str


@dataclass(frozen=True)
class IdentityProvider:
    """A running provider: its issuer, its clients, and what a test asks of it."""

    issuer: str
    client_id: str
    client_secret: str
    public_client_id: str
    redirect_uri: str

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    def discovery(self) -> dict[str, Any]:
        """The OpenID discovery document."""
        return _json(httpx2.get(f"{self.issuer}/.well-known/openid-configuration", timeout=10))

    def client_credentials_token(self, resource: str, scope: str = SCOPES) -> dict[str, Any]:
        """The token response of a client-credentials grant for `resource` (RFC 8707)."""
        return self._token(grant_type="client_credentials", resource=resource, scope=scope)

    def exchange_token(self, subject_token: str, audience: str, scope: str | None = None) -> dict[str, Any]:
        """The token response of an RFC 8693 token exchange of `subject_token` for `audience`."""
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject_token,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "audience": audience,
        }
        if scope is not None:
            form["scope"] = scope
        return self._token(**form)

    def authorization_request(self, resource: str, scope: str = SCOPES) -> AuthorizationRequest:
        """A fresh authorization code + PKCE request of the public client for `resource`."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
        state = secrets.token_urlsafe(16)
        query = {
            "client_id": self.public_client_id,
            "response_type": "code",
            "redirect_uri": self.redirect_uri,
            "scope": f"openid {scope}",
            "resource": resource,
            "code_challenge": challenge.decode(),
            "code_challenge_method": "S256",
            "state": state,
        }
        url = str(httpx2.URL(f"{self.issuer}/auth", params=query))
        return AuthorizationRequest(url, resource, state, verifier)

    def redeem(self, request: AuthorizationRequest, location: str) -> dict[str, Any]:
        """The token response for the code in `location`, where the sign-in came back to."""
        params = httpx2.URL(location).params
        assert params.get("state") == request.state, f"state changed on the way back: {location}"
        assert "code" in params, f"no code in the redirect: {location}"
        form = {
            "grant_type": "authorization_code",
            "code": params["code"],
            "redirect_uri": self.redirect_uri,
            "code_verifier": request.verifier,
            "client_id": self.public_client_id,
            "resource": request.resource,
        }
        return _json(httpx2.post(self.token_endpoint, data=form, timeout=10))

    def authorization_code_token(self, user: str, resource: str, scope: str = SCOPES) -> dict[str, Any]:
        """The token response of an authorization code + PKCE grant for `resource`, `user` signed in.

        The provider's development login and consent pages are plain HTML forms, posted here as a
        browser would (any password); tests/idp/test_provider.py also signs in with Chromium.
        """
        request = self.authorization_request(resource, scope)
        with httpx2.Client(timeout=10) as browser:
            answer = browser.get(request.url)
            for _ in range(10):  # login, consent: a few redirects each
                location = answer.headers.get("location")
                if location is None:
                    action, fields = _form(answer, user)
                    answer = browser.post(action, data=fields)
                elif location.startswith(self.redirect_uri):
                    return self.redeem(request, location)
                else:
                    answer = browser.get(answer.url.join(location))
        raise AssertionError(f"the sign-in of {user} never came back to {self.redirect_uri}")

    def rotate_keys(self) -> str:
        """Add a new signing key, first in the JWKS (the old ones stay published); its `kid`."""
        kid: str = _json(httpx2.post(f"{self.issuer}/test/rotate", timeout=30))["kid"]
        return kid

    def _token(self, **form: str) -> dict[str, Any]:
        answer = httpx2.post(
            self.token_endpoint, data=form, auth=(self.client_id, self.client_secret), timeout=10
        )
        return _json(answer)


def _form(page: httpx2.Response, user: str) -> tuple[str, dict[str, str]]:
    """Where the provider's login or consent form posts, and what it posts."""
    assert page.status_code == 200, f"{page.request.url}: {page.status_code} {page.text[:500]}"
    action = re.search(r'<form[^>]*action="([^"]+)"', page.text)
    prompt = re.search(r'name="prompt" value="(\w+)"', page.text)
    assert action and prompt, f"no sign-in form at {page.request.url}: {page.text[:500]}"
    fields = {"prompt": prompt[1]}
    if prompt[1] == "login":
        fields.update(login=user, password="any password")
    return str(page.url.join(html.unescape(action[1]))), fields


def _json(answer: httpx2.Response) -> Any:
    assert answer.status_code == 200, f"{answer.request.url}: {answer.status_code} {answer.text[:500]}"
    return answer.json()


@contextmanager
def identity_provider(
    *,
    client_id: str = "colibri-test",
    client_secret: str = "colibri-test-secret",
    public_client_id: str = "colibri-public",
    redirect_uri: str = "http://127.0.0.1:33418/callback",
    opaque_resources: tuple[str, ...] = (),
) -> Iterator[IdentityProvider]:
    """A started provider, stopped (and waited for) on the way out; `opaque_resources` get opaque
    access tokens (RFC 7662 introspection) instead of JWTs."""
    node = node_support.require_node(IDP, PACKAGES, "identity provider")
    env = {
        **os.environ,
        "IDP_CLIENT_ID": client_id,
        "IDP_CLIENT_SECRET": client_secret,
        "IDP_PUBLIC_CLIENT_ID": public_client_id,
        "IDP_REDIRECT_URIS": redirect_uri,
        "IDP_OPAQUE_RESOURCES": " ".join(opaque_resources),
    }
    # Its log goes to a temporary file, not a pipe nobody reads (a full pipe would block it).
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [node, str(IDP / "provider.mjs"), "0"],
            cwd=IDP,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            issuer = _ready_issuer(process, log)
            yield IdentityProvider(issuer, client_id, client_secret, public_client_id, redirect_uri)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            assert process.stdout is not None
            process.stdout.close()


def _ready_issuer(process: subprocess.Popen[str], log: IO[str]) -> str:
    """The issuer from the provider's one JSON line, waited for until it comes or the process ends."""
    assert process.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                line = process.stdout.readline()
                if line:
                    issuer: str = json.loads(line)["issuer"]
                    return issuer
                process.wait(timeout=10)  # end of stdout: the process ended
                break
    log.seek(0)
    if process.poll() is None:
        raise AssertionError(
            f"provider.mjs printed no issuer within {READY_TIMEOUT:.0f} s: {log.read()[-3000:]}"
        )
    raise AssertionError(f"provider.mjs ended ({process.returncode}): {log.read()[-3000:]}")
