"""The official TypeScript SDK client signs in to Colibri by itself (SPEC §20, Discovery for clients;
issue 41, "Real clients"): given only the server's URL and its own registration at the provider,
it reads the 401, the RFC 9728 metadata and the provider's metadata, gets a token for the resource
(RFC 8707) and calls tools, by client credentials and by authorization code + PKCE with the user
signing in in headless Chromium; against `colibri serve --http` and `colibri switchboard --http`
with `"auth": {"oauth": …}`. Each call's audit row names the token's principal, issuer and jti.
The client is tests/oauth/ts_client.mjs (run by ts_client.py); the provider is the real
oidc-provider (tests/idp)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from tests.helpers import query
from tests.helpers.idp import SCOPES, IdentityProvider, identity_provider
from tests.http.helpers import get, http_env, start_server
from tests.http.node import require_node
from tests.oauth.ts_client import browser_sign_in, calls, client_credentials
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    write_config,
)


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture(scope="module")
def node() -> str:
    return require_node()


@dataclass(frozen=True)
class Target:
    """Where the client signs in: the /mcp URL, the store whose actions rows record its calls, and
    the prefix of the tools there (the switchboard names a downstream's tools SERVER.TOOL)."""

    url: str
    db: Path
    prefix: str = ""


def _serve(idp: IdentityProvider, tmp_path: Path, claim: str) -> Iterator[Target]:
    server = start_server(
        http_env(tmp_path), tmp_path, "--oauth-issuer", idp.issuer, "--oauth-principal-claim", claim
    )
    try:
        server.wait_ready()
        yield Target(server.url, Path(server.env["COLIBRI_DB_PATH"]))
    finally:
        server.stop()


@pytest.fixture(scope="module")
def serve_by_sub(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    yield from _serve(idp, tmp_path_factory.mktemp("by-sub"), "sub")


@pytest.fixture(scope="module")
def serve_by_email(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    yield from _serve(idp, tmp_path_factory.mktemp("by-email"), "email")


@pytest.fixture(scope="module")
def switchboard(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """`colibri switchboard --http` taking the provider's tokens, before `colibri serve` on stdio.
    Its principal is the default claim, sub: a user's sub at this provider is her email."""
    root = tmp_path_factory.mktemp("switchboard")
    config = write_config(
        root,
        {"colibri": Downstreams(root).colibri()},
        auth={"oauth": {"issuer": idp.issuer}},
        audit={"db": "audit/gateway.db"},
    )
    port = free_port()
    log = root / "switchboard.log"
    with log.open("wb") as sink:
        board = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}"),
            env=switchboard_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        # Ready once its downstream has had a healthy verdict: the client's first call is routed.
        deadline = time.monotonic() + 60
        while not _ready(f"http://127.0.0.1:{port}/readyz"):
            assert board.poll() is None, f"the switchboard exited: {log.read_text()}"
            assert time.monotonic() < deadline, f"/readyz never 200: {log.read_text()}"
            time.sleep(0.05)
        yield Target(f"http://127.0.0.1:{port}/mcp", root / "audit" / "gateway.db", "colibri.")
    finally:
        assert stop(board) == 0, log.read_text()


def _ready(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


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


@pytest.mark.parametrize("where", ["serve_by_sub", "switchboard"])
def test_client_credentials_discovers_the_provider_and_calls_tools(
    node: str, idp: IdentityProvider, where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    target: Target = request.getfixturevalue(where)
    report = client_credentials(node, idp, target.url, calls(target.prefix), tmp_path)
    assert_discovered(report, idp, target.url, "client_credentials")
    claims = jwt.decode(report["accessToken"], options={"verify_signature": False})
    assert claims["sub"] == idp.client_id
    assert audit_rows(target.db, claims["sub"]) == [
        (call["tool"], "ok", idp.client_id, idp.issuer, claims["jti"]) for call in calls(target.prefix)
    ]


@pytest.mark.parametrize("where", ["serve_by_email", "switchboard"])
def test_a_user_signs_in_in_chromium_and_the_rows_name_her(
    node: str, idp: IdentityProvider, where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    target: Target = request.getfixturevalue(where)
    report = browser_sign_in(node, idp, target.url, calls(target.prefix), tmp_path, user="ana@example.com")
    query_of = parse_qs(urlsplit(report["authorize"]).query)
    assert report["authorize"].startswith(f"{idp.issuer}/auth?"), report["authorize"]
    assert query_of["client_id"] == [idp.public_client_id]
    assert query_of["resource"] == [target.url]
    assert query_of["code_challenge_method"] == ["S256"] and query_of["code_challenge"]
    assert query_of["scope"] == [SCOPES]  # the 401's scope: write access asked for unaided
    assert_discovered(report, idp, target.url, "authorization_code")
    claims = jwt.decode(report["accessToken"], options={"verify_signature": False})
    assert audit_rows(target.db, "ana@example.com") == [
        (call["tool"], "ok", "ana@example.com", idp.issuer, claims["jti"]) for call in calls(target.prefix)
    ]
