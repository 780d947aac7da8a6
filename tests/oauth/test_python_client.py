"""The official Python SDK client completes the MCP authorization flow against `colibri serve
--http` with no token configured by hand (SPEC §20): client credentials, and authorization code +
PKCE with the sign-in in headless Chromium. The rows, the task's history and the thought name the
provider's user."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.idp import IdentityProvider, identity_provider
from tests.http.helpers import HttpServer, http_env, start_server
from tests.oauth.sdk_flows import signed_in_client

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture
def served(idp: IdentityProvider, tmp_path: Path) -> Iterator[HttpServer]:
    server = start_server(http_env(tmp_path), tmp_path, "--oauth-issuer", idp.issuer)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def rows(server: HttpServer) -> list[sqlite3.Row]:
    with sqlite3.connect(server.env["COLIBRI_DB_PATH"]) as db:
        db.row_factory = sqlite3.Row
        return db.execute("SELECT * FROM actions WHERE outcome != 'running' ORDER BY sequence_no").fetchall()


async def test_client_credentials_discovers_the_provider_and_calls(
    idp: IdentityProvider, served: HttpServer
) -> None:
    async with signed_in_client(served.url, idp, flow="client_credentials") as client:
        result = await client.call_tool("server_ping", {})
        assert not result.is_error, result
    (row,) = [row for row in rows(served) if row["tool"] == "server_ping"]
    # A machine's token names its client as `sub`: the principal is the client.
    assert (row["principal"], row["issuer"]) == (idp.client_id, idp.issuer)


async def test_authorization_code_with_pkce_signs_ana_in_and_the_log_names_her(
    idp: IdentityProvider, served: HttpServer
) -> None:
    async with signed_in_client(served.url, idp, flow="pkce", user="ana@example.com") as client:
        created = await client.call_tool("task_create", {"title": "signed in through the provider"})
        assert not created.is_error, created
        started = await client.call_tool("audit_session_start", {"session_id": "s1"})
        assert not started.is_error, started
        thought = await client.call_tool(
            "thought_record", {"session_id": "s1", "kind": "decision", "content": "ana decides"}
        )
        assert not thought.is_error, thought
    answered = [row for row in rows(served) if row["tool"] in ("task_create", "thought_record")]
    assert len(answered) == 2
    assert {row["principal"] for row in answered} == {"ana@example.com"}
    assert {row["issuer"] for row in answered} == {idp.issuer}
    assert all(row["token_id"] for row in answered)
    with sqlite3.connect(served.env["COLIBRI_DB_PATH"]) as db:
        assert db.execute("SELECT DISTINCT principal FROM task_history").fetchall() == [("ana@example.com",)]
        assert db.execute("SELECT DISTINCT principal FROM thought_records").fetchall() == [
            ("ana@example.com",)
        ]
