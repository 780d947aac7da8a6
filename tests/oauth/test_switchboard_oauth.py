"""`colibri switchboard --http` as an OAuth resource server (SPEC §20): `"auth": {"oauth": {…}}`
beside the tokens file, against the real identity provider. The Python SDK client completes the
flow unaided (client credentials, and authorization code + PKCE with a Chromium sign-in); the
audit rows name the provider's user, its issuer and the token's jti; the config's problems are
refused with their JSON path."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from colibri.switchboard.faces import TokensFile
from tests.helpers.idp import IdentityProvider, identity_provider
from tests.helpers.static_issuer import bad_tokens, static_issuer
from tests.http.helpers import get, http_client
from tests.oauth.sdk_flows import signed_in_client
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@contextmanager
def gateway(
    tmp_path: Path, oauth: dict[str, Any], servers: dict[str, Any] | None = None, **auth: Any
) -> Iterator[tuple[str, Path]]:
    """A switchboard at http://127.0.0.1:PORT/mcp in front of `colibri serve` on stdio (and `servers`):
    (url, audit db)."""
    tokens = tmp_path / "tokens.jsonl"
    config = write_config(
        tmp_path,
        {"colibri": Downstreams(tmp_path).colibri(), **(servers or {})},
        auth={"tokens_file": str(tokens), "oauth": oauth, **auth},
        audit={"db": "audit/gateway.db"},
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield f"http://127.0.0.1:{port}/mcp", tmp_path / "audit" / "gateway.db"
    finally:
        stop(board)


def rows(db: Path, tool: str) -> list[sqlite3.Row]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(
            "SELECT * FROM actions WHERE tool = ? AND outcome != 'running' ORDER BY sequence_no", (tool,)
        ).fetchall()


async def test_both_sdk_flows_call_through_the_gateway_and_the_rows_name_the_user(
    idp: IdentityProvider, tmp_path: Path
) -> None:
    with gateway(tmp_path, {"issuer": idp.issuer}) as (url, db):
        status, headers, _ = get(url)
        assert status == 401
        assert "resource_metadata=" in {k.lower(): v for k, v in headers.items()}["www-authenticate"]
        async with signed_in_client(url, idp, flow="client_credentials") as client:
            result = await client.call_tool("colibri.server_ping", {})
            assert not result.is_error, result
        async with signed_in_client(url, idp, flow="pkce", user="bob@example.com") as client:
            result = await client.call_tool("colibri.task_list", {})
            assert not result.is_error, result
        ping, listing = rows(db, "colibri.server_ping"), rows(db, "colibri.task_list")
        assert [(r["principal"], r["issuer"]) for r in ping] == [(idp.client_id, idp.issuer)]
        assert [(r["principal"], r["issuer"]) for r in listing] == [("bob@example.com", idp.issuer)]
        assert (
            ping[0]["token_id"] and listing[0]["token_id"] and ping[0]["token_id"] != listing[0]["token_id"]
        )
        # The tokens file keeps working beside the provider.
        token = TokensFile(tmp_path / "tokens.jsonl").create("ops")
        async with http_client(url, token) as client:
            assert not (await client.call_tool("colibri.server_ping", {})).is_error
        assert rows(db, "colibri.server_ping")[-1]["principal"] == "ops"


@pytest.mark.parametrize(
    ("oauth", "path", "said"),
    [
        ({}, "auth.oauth.issuer", "required"),
        ({"issuer": "ftp://idp"}, "auth.oauth.issuer", "https://"),
        ({"issuer": "https://idp", "audiences": "x"}, "auth.oauth.audiences", "did you mean 'audience'"),
        ({"issuer": "https://idp", "principal_claim": "a b"}, "auth.oauth.principal_claim", "claim name"),
        ({"issuer": "https://idp", "client_id": "gw"}, "auth.oauth.client_secret", "non-empty"),
        (
            {"issuer": "https://idp", "client_id": "gw", "client_secret": "plain"},
            "auth.oauth.client_secret",
            "${VAR}",
        ),
        ({"issuer": "https://idp", "introspection": True}, "auth.oauth.introspection", "client_id"),
        (
            {"issuer": "https://idp", "read_scope": "x", "write_scope": "x"},
            "auth.oauth.write_scope",
            "differ",
        ),
    ],
)
def test_a_malformed_oauth_key_is_refused_with_its_json_path(
    tmp_path: Path, oauth: dict[str, Any], path: str, said: str
) -> None:
    config = write_config(tmp_path, {"colibri": Downstreams(tmp_path).colibri()}, auth={"oauth": oauth})
    done = subprocess.run(
        switchboard_command(config, "--http", "127.0.0.1:0"),
        check=False,
        env=switchboard_env(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert path in done.stderr.decode() and said in done.stderr.decode(), done.stderr


async def test_a_group_policy_admits_one_users_calls_and_refuses_anothers(
    idp: IdentityProvider, tmp_path: Path
) -> None:
    policies = {"group:sre": {"allow": ["*"]}, "group:dev": {"allow": ["colibri.server_ping"]}}
    clock = {"clock": Downstreams.time_server()}
    with gateway(tmp_path, {"issuer": idp.issuer}, clock, policies=policies) as (url, db):
        ana = idp.authorization_code_token("ana@example.com", url)["access_token"]
        bob = idp.authorization_code_token("bob@example.com", url)["access_token"]
        async with http_client(url, ana) as client:
            assert not (await client.call_tool("colibri.task_list", {})).is_error
            assert "colibri.task_list" in {tool.name for tool in (await client.list_tools()).tools}
        async with http_client(url, bob) as client:
            refused = await client.call_tool("colibri.task_list", {})
            assert refused.is_error and "TOOL_NOT_ADMITTED" in str(refused.content), refused
            assert not (await client.call_tool("colibri.server_ping", {})).is_error
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert "colibri.task_list" not in listed and "colibri.server_ping" in listed
        # /status shows each person the servers their groups let them call.
        pages = {
            who: get(url.removesuffix("/mcp") + "/status", {"Authorization": f"Bearer {token}"})
            for who, token in (("ana", ana), ("bob", bob))
        }
        assert pages["ana"][0] == pages["bob"][0] == 200
        assert b"clock" in pages["ana"][2], pages["ana"][2][:3000]
        assert b"clock" not in pages["bob"][2], pages["bob"][2][:3000]
        answered = {(r["principal"], r["outcome"], r["reason"]) for r in rows(db, "colibri.task_list")}
        assert answered == {
            ("ana@example.com", "ok", None),
            ("bob@example.com", "denied", "policy:group:dev"),
        }


def test_bad_tokens_are_refused_at_the_gateway_and_every_401_names_the_metadata(tmp_path: Path) -> None:
    with static_issuer() as issuer, gateway(tmp_path, {"issuer": issuer.issuer}) as (url, _):
        base = url.removesuffix("/mcp")
        good = issuer.token(url)
        assert get(f"{base}/metrics", {"Authorization": f"Bearer {good}"})[0] == 200
        for name, (token, _) in bad_tokens(issuer, url).items():
            for path in ("/mcp", "/metrics"):
                status, headers, _ = get(base + path, {"Authorization": f"Bearer {token}"})
                challenge = {k.lower(): v for k, v in headers.items()}.get("www-authenticate", "")
                assert status == 401, (name, path, status)
                assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge, (
                    name,
                    path,
                )
