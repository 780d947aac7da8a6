"""`colibri serve --http` as an OAuth resource server (SPEC §20), against the real identity provider
(tests/idp: panva's oidc-provider) the suite starts: its JWT access tokens are accepted beside
Colibri's own tokens, the principal is the configured claim, each call's row names the issuer and
the token's jti, scopes map to read and write, and every bad token is refused with 401
`invalid_token` and its reason in the server's log only."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest

from tests.helpers.idp import IdentityProvider, identity_provider
from tests.helpers.static_issuer import bad_tokens, static_issuer
from tests.http.helpers import HttpServer, free_port, get, http_client, http_env, make_token, start_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture
def served(idp: IdentityProvider, tmp_path: Path) -> Iterator[HttpServer]:
    env = http_env(tmp_path)
    server = start_server(env, tmp_path, "--oauth-issuer", idp.issuer, "--oauth-principal-claim", "sub")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _rows(server: HttpServer) -> list[dict[str, object]]:
    import sqlite3

    with sqlite3.connect(server.env["COLIBRI_DB_PATH"]) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM actions ORDER BY sequence_no")]


async def _call(url: str, token: str, tool: str, arguments: dict[str, object]) -> tuple[bool, str]:
    async with http_client(url, token) as client:
        result = await client.call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return bool(result.is_error), text


async def test_a_client_credentials_token_calls_tools_and_its_row_names_the_issuer_and_jti(
    idp: IdentityProvider, served: HttpServer
) -> None:
    token = idp.client_credentials_token(served.url)["access_token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    failed, text = await _call(served.url, token, "server_ping", {})
    assert not failed, text
    rows = [row for row in _rows(served) if row["tool"] == "server_ping"]
    assert rows and rows[-1]["principal"] == claims["sub"]
    assert rows[-1]["issuer"] == idp.issuer
    assert rows[-1]["token_id"] == claims["jti"]


async def test_colibri_tokens_keep_working_beside_the_provider(
    idp: IdentityProvider, served: HttpServer
) -> None:
    token = make_token(served.env, "ci")
    failed, text = await _call(served.url, token, "server_ping", {})
    assert not failed, text
    assert _rows(served)[-1]["principal"] == "ci"


def test_every_bad_token_is_refused_with_invalid_token_and_its_reason_only_in_the_log(tmp_path: Path) -> None:
    with static_issuer() as issuer:
        env = http_env(tmp_path)
        server = start_server(env, tmp_path, "--oauth-issuer", issuer.issuer)
        try:
            server.wait_ready()
            good = issuer.token(server.url, alg="ES256")
            assert get(server.url, {"Authorization": f"Bearer {good}"})[0] not in (401, 403)
            for alg in ("RS256", "EdDSA"):
                assert (
                    get(server.url, {"Authorization": f"Bearer {issuer.token(server.url, alg=alg)}"})[0]
                    != 401
                )
            for name, (token, reason) in bad_tokens(issuer, server.url).items():
                status, headers, body = get(server.url, {"Authorization": f"Bearer {token}"})
                assert status == 401, (name, status, body)
                challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
                assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge, name
                assert reason.encode() not in body, (name, body)
                assert reason in server.log.read_text(), (name, reason, server.log.read_text())
        finally:
            server.stop()


def test_an_unreachable_issuer_says_so_in_one_line_and_colibri_tokens_still_work(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    issuer = f"http://127.0.0.1:{free_port()}"
    server = start_server(env, tmp_path, "--oauth-issuer", issuer)
    try:
        server.wait_ready()
        token = make_token(env, "ops")
        assert get(f"{server.base}/log/checkpoint", {"Authorization": f"Bearer {token}"})[0] in (200, 404)
        deadline = time.monotonic() + 20
        while "cannot be reached" not in server.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = [line for line in server.log.read_text().splitlines() if "cannot be reached" in line]
        assert len(lines) == 1, server.log.read_text()
        status, _, _ = get(server.url, {"Authorization": "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"})
        assert status == 401
    finally:
        server.stop()


async def test_scopes_map_to_read_and_write_and_too_little_scope_is_a_403(tmp_path: Path) -> None:
    with static_issuer() as issuer:
        env = http_env(tmp_path)
        server = start_server(
            env, tmp_path, "--oauth-issuer", issuer.issuer, "--oauth-principal-claim", "email"
        )
        try:
            server.wait_ready()
            none = issuer.token(server.url, scope="openid", email="ana@example.com")
            status, headers, body = get(server.url, {"Authorization": f"Bearer {none}"})
            assert status == 403, (status, body)
            challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
            assert (
                'error="insufficient_scope"' in challenge
                and 'scope="colibri:read colibri:write"' in challenge
            )
            reader = issuer.token(server.url, scope="colibri:read", email="ana@example.com")
            assert (await _call(server.url, reader, "server_ping", {}))[0] is False
            failed, text = await _call(
                server.url, reader, "thought_record", {"thought": "x", "session_id": "s"}
            )
            assert failed and "TOOL_NOT_ADMITTED" in text, text
            writer = issuer.token(server.url, email="ana@example.com")
            failed, text = await _call(
                server.url, writer, "thought_record", {"thought": "x", "session_id": "s"}
            )
            assert "TOOL_NOT_ADMITTED" not in text, text
            assert {row["principal"] for row in _rows(server)} == {"ana@example.com"}
        finally:
            server.stop()


async def test_a_key_rotated_at_the_provider_is_picked_up_without_a_restart(
    idp: IdentityProvider, served: HttpServer
) -> None:
    before = idp.client_credentials_token(served.url)["access_token"]
    assert not (await _call(served.url, before, "server_ping", {}))[0]
    kid = idp.rotate_keys()
    after = idp.client_credentials_token(served.url)["access_token"]
    assert jwt.get_unverified_header(after)["kid"] == kid != jwt.get_unverified_header(before)["kid"]
    failed, text = await _call(served.url, after, "server_ping", {})
    assert not failed, text
    assert not (await _call(served.url, before, "server_ping", {}))[0]  # the old key is still published
    assert served.process.poll() is None


OPAQUE = "https://colibri.example/mcp"


async def test_an_opaque_token_is_checked_by_introspection(tmp_path: Path) -> None:
    with identity_provider(opaque_resources=(OPAQUE,)) as provider:
        env = {**http_env(tmp_path), "COLIBRI_OAUTH_CLIENT_SECRET": provider.client_secret}
        args = ("--oauth-issuer", provider.issuer, "--oauth-audience", OPAQUE)
        server = start_server(env, tmp_path, *args, "--oauth-introspection-client", provider.client_id)
        try:
            server.wait_ready()
            opaque = provider.client_credentials_token(OPAQUE)["access_token"]
            assert opaque.count(".") != 2  # not a JWT
            failed, text = await _call(server.url, opaque, "server_ping", {})
            assert not failed, text
            (row,) = [row for row in _rows(server) if row["tool"] == "server_ping"]
            assert (row["principal"], row["issuer"]) == (provider.client_id, provider.issuer)
            # A token for another audience is refused though the provider says it is active.
            other = provider.client_credentials_token(f"{OPAQUE}/other")["access_token"]
            assert get(server.url, {"Authorization": f"Bearer {other}"})[0] == 401
        finally:
            server.stop()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--oauth-issuer", "ftp://idp.example"), "--oauth-issuer: expected the identity provider's issuer"),
        (("--oauth-audience", "https://a.example/mcp"), "--oauth-audience needs --oauth-issuer"),
        (
            ("--oauth-issuer", "https://idp.example", "--oauth-principal-claim", "a b"),
            "--oauth-principal-claim",
        ),
        (("--oauth-issuer", "https://idp.example", "--oauth-read-scope", 'a"b'), "--oauth-read-scope"),
        (("--oauth-issuer", "https://idp.example", "--oauth-audience", "https://a#b"), "--oauth-audience"),
        (("--oauth-issuer", "https://idp.example", "--no-auth"), "--no-auth serves without tokens"),
        (
            ("--oauth-issuer", "https://idp.example", "--oauth-introspection-client", "c"),
            "COLIBRI_OAUTH_CLIENT_SECRET",
        ),
    ],
)
@pytest.mark.parametrize("command", ["serve", "ui"])
def test_a_malformed_oauth_option_exits_2_naming_it(
    tmp_path: Path, command: str, args: tuple[str, ...], said: str
) -> None:
    env = http_env(tmp_path)
    make_token(env, "ops")  # the ui needs a store to exist
    done = subprocess.run(
        [sys.executable, "-m", "colibri", command, "--http", f"127.0.0.1:{free_port()}", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
