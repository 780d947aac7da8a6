"""The official TypeScript SDK client signs in to Colibri by itself (SPEC §20, Discovery for clients;
issue 41, "Real clients"): given only the server's URL and its own registration at the provider,
it reads the 401, the RFC 9728 metadata and the provider's metadata, gets a token for the resource
(RFC 8707) and calls tools, by client credentials and by authorization code + PKCE with the user
signing in in headless Chromium. Each call's audit row names the token's principal, issuer and jti.
The client is tests/oauth/ts_client.mjs; the provider is the real oidc-provider (tests/idp)."""

from __future__ import annotations

import json
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from tests.helpers import query
from tests.helpers.idp import SCOPES, IdentityProvider, identity_provider
from tests.http.helpers import HttpServer, http_env, start_server
from tests.http.node import require_node
from tests.ui.browser import browser_page

SCRIPT = Path(__file__).resolve().with_name("ts_client.mjs")
TIMEOUT = 120.0
CALLS: list[dict[str, Any]] = [
    {"tool": "server_ping"},
    {"tool": "audit_session_start", "arguments": {"agent_id": "ts-oauth"}, "save": "session"},
    {  # a write: the token must carry colibri:write, which the 401 named and the client asked for
        "tool": "thought_record",
        "arguments": {"session_id": "$session.data.session_id", "kind": "plan", "content": "signed in"},
    },
]


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture(scope="module")
def node() -> str:
    return require_node()


def _serve(idp: IdentityProvider, tmp_path: Path, claim: str) -> Iterator[HttpServer]:
    server = start_server(
        http_env(tmp_path), tmp_path, "--oauth-issuer", idp.issuer, "--oauth-principal-claim", claim
    )
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def by_sub(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    yield from _serve(idp, tmp_path_factory.mktemp("by-sub"), "sub")


@pytest.fixture(scope="module")
def by_email(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    yield from _serve(idp, tmp_path_factory.mktemp("by-email"), "email")


@dataclass
class TsClient:
    """ts_client.mjs running on one spec: its stdout read line by line, its stdin open for the redirect."""

    process: subprocess.Popen[str]
    stderr: IO[str]
    deadline: float

    def line(self) -> dict[str, Any]:
        """The script's next JSON line, waited for until the deadline."""
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if selector.select(timeout=max(0.0, self.deadline - time.monotonic())):
                text = self.process.stdout.readline()
                if text:
                    line: dict[str, Any] = json.loads(text)
                    return line
                raise AssertionError(f"ts_client.mjs ended without its report: {self.log()}")
        raise AssertionError(f"ts_client.mjs said nothing within {TIMEOUT:.0f} s: {self.log()}")

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{text}\n")
        self.process.stdin.flush()

    def report(self) -> dict[str, Any]:
        line = self.line()
        assert "report" in line, line
        report: dict[str, Any] = line["report"]
        assert self.process.wait(timeout=max(1.0, self.deadline - time.monotonic())) == 0, self.log()
        return report

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-3000:]


@contextmanager
def ts_client(node: str, spec: dict[str, Any], tmp_path: Path) -> Iterator[TsClient]:
    """ts_client.mjs started on `spec`; killed, if it has not ended, and waited for on the way out."""
    path = tmp_path / f"ts-spec-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(spec))
    # Its stderr goes to a file, not a pipe nobody reads while stdout is awaited.
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            [node, str(SCRIPT), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            yield TsClient(process, stderr, time.monotonic() + TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


def client_credentials(node: str, idp: IdentityProvider, url: str, tmp_path: Path) -> dict[str, Any]:
    """The report of the SDK's ClientCredentialsProvider signing in to `url` and making CALLS."""
    spec = {
        "url": url,
        "flow": "client_credentials",
        "issuer": idp.issuer,
        "clientId": idp.client_id,
        "clientSecret": idp.client_secret,
        "scope": SCOPES,
        "calls": CALLS,
    }
    with ts_client(node, spec, tmp_path) as client:
        return client.report()


def browser_sign_in(node: str, idp: IdentityProvider, url: str, user: str, tmp_path: Path) -> dict[str, Any]:
    """The report of the script's authorization code + PKCE sign-in to `url`, `user` signing in
    with Chromium at the provider; the authorization URL it was sent to is in report["authorize"]."""
    spec = {
        "url": url,
        "flow": "authorization_code",
        "issuer": idp.issuer,
        "clientId": idp.public_client_id,
        "redirectUrl": idp.redirect_uri,
        "calls": CALLS,
    }
    with ts_client(node, spec, tmp_path) as client:
        first = client.line()
        assert "authorize" in first, f"no authorization URL: {first} {client.log()}"
        client.send(_signed_in_location(idp, first["authorize"], user))
        report = client.report()
    report["authorize"] = first["authorize"]
    return report


def _signed_in_location(idp: IdentityProvider, authorize: str, user: str) -> str:
    """Where the provider sends the browser back to once `user` has signed in and consented."""
    with browser_page() as page:
        # Nothing listens at the client's loopback redirect URI: the browser's arrival there is the answer.
        page.route(f"{idp.redirect_uri}**", lambda route: route.fulfill(status=200, body="signed in"))
        page.goto(authorize)
        page.fill('input[name="login"]', user)
        page.fill('input[name="password"]', "any password")
        page.click("button[type=submit]")
        page.click("text=Continue")
        page.wait_for_url(f"{idp.redirect_uri}**")
        location: str = page.url
    return location


def assert_discovered(report: dict[str, Any], idp: IdentityProvider, url: str, grant: str) -> None:
    """The calls succeeded, and the client found its way alone: 401, the resource's metadata, the
    provider's metadata, a token for the resource, then /mcp with the bearer token."""
    assert report["error"] is None, report
    for entry in report["calls"]:
        assert entry["threw"] is None and entry["isError"] is False, entry
        assert entry["structuredContent"]["ok"] is True, entry
    requests = report["requests"]
    seen = [(entry["method"], entry["url"], entry.get("status")) for entry in requests]
    assert seen[0] == ("POST", url, 401), seen
    assert not requests[0]["bearer"], seen
    origin = url.removesuffix("/mcp")
    assert ("GET", f"{origin}/.well-known/oauth-protected-resource/mcp", 200) in seen, seen
    provider_metadata = {
        f"{idp.issuer}/.well-known/{name}" for name in ("oauth-authorization-server", "openid-configuration")
    }
    assert any(
        method == "GET" and at in provider_metadata and status == 200 for method, at, status in seen
    ), seen
    tokens = [entry for entry in requests if entry["url"] == idp.token_endpoint]
    assert [entry["status"] for entry in tokens] == [200], seen
    assert tokens[0]["form"]["grant_type"] == grant
    assert tokens[0]["form"]["resource"] == url  # RFC 8707: the token is for this server only
    after = requests[requests.index(tokens[0]) + 1 :]
    assert after and all(entry["bearer"] for entry in after if entry["url"] == url), seen
    claims = jwt.decode(report["accessToken"], options={"verify_signature": False})
    assert claims["aud"] == url and set(claims["scope"].split()) == set(SCOPES.split()), claims


def audit_rows(db: Path, principal: str) -> list[tuple[Any, ...]]:
    rows = query(
        db,
        "SELECT tool, outcome, principal, issuer, token_id FROM actions WHERE principal = ?"
        " ORDER BY sequence_no",
        (principal,),
    )
    return [tuple(row) for row in rows]


def test_client_credentials_discovers_the_provider_and_calls_tools(
    node: str, idp: IdentityProvider, by_sub: HttpServer, tmp_path: Path
) -> None:
    report = client_credentials(node, idp, by_sub.url, tmp_path)
    assert_discovered(report, idp, by_sub.url, "client_credentials")
    claims = jwt.decode(report["accessToken"], options={"verify_signature": False})
    assert claims["sub"] == idp.client_id
    db = Path(by_sub.env["COLIBRI_DB_PATH"])
    assert audit_rows(db, claims["sub"]) == [
        (call["tool"], "ok", idp.client_id, idp.issuer, claims["jti"]) for call in CALLS
    ]


def test_a_user_signs_in_in_chromium_and_the_rows_name_her(
    node: str, idp: IdentityProvider, by_email: HttpServer, tmp_path: Path
) -> None:
    report = browser_sign_in(node, idp, by_email.url, "ana@example.com", tmp_path)
    query_of = parse_qs(urlsplit(report["authorize"]).query)
    assert report["authorize"].startswith(f"{idp.issuer}/auth?"), report["authorize"]
    assert query_of["client_id"] == [idp.public_client_id]
    assert query_of["resource"] == [by_email.url]
    assert query_of["code_challenge_method"] == ["S256"] and query_of["code_challenge"]
    assert query_of["scope"] == [SCOPES]  # the 401's scope: write access asked for unaided
    assert_discovered(report, idp, by_email.url, "authorization_code")
    claims = jwt.decode(report["accessToken"], options={"verify_signature": False})
    db = Path(by_email.env["COLIBRI_DB_PATH"])
    assert audit_rows(db, "ana@example.com") == [
        (call["tool"], "ok", "ana@example.com", idp.issuer, claims["jti"]) for call in CALLS
    ]
