"""`colibri serve --http` driven by the Python SDK client: every tool, both eras, tokens, scopes."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR

from colibri.core.modes import Mode
from colibri.domains.log.entries import stored_action_entry
from colibri.tools.catalog import TOOLS, admitted_tools
from tests.helpers import INITIALIZE, MCP_HEADERS, call, chain_error, connect, ok_data, query
from tests.http.helpers import colibri, get, http_client, http_env, make_token, running

pytestmark = pytest.mark.anyio


async def every_tool(client: Client, tag: str) -> dict[str, Any]:
    """All 14 tools, each answered with a success envelope; returns what it made."""
    answers: dict[str, Any] = {}
    answers["server_ping"] = ok_data(await call(client, "server_ping"))
    answers["server_health"] = ok_data(await call(client, "server_health"))
    task = ok_data(await call(client, "task_create", {"title": f"task {tag}"}))
    answers["task_create"] = task
    task_id = task["id"]
    answers["task_get"] = ok_data(await call(client, "task_get", {"task_id": task_id}))
    answers["task_update"] = ok_data(
        await call(client, "task_update", {"task_id": task_id, "status": "in_progress"})
    )
    answers["task_list"] = ok_data(await call(client, "task_list", {}))
    answers["task_next_actions"] = ok_data(await call(client, "task_next_actions", {}))
    session = ok_data(await call(client, "audit_session_start", {"agent_id": tag}))["session_id"]
    answers["audit_session_start"] = session
    record = ok_data(
        await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": tag})
    )
    answers["thought_record"] = record
    answers["thought_record_list"] = ok_data(
        await call(client, "thought_record_list", {"session_id": session})
    )
    answers["audit_verify_chain"] = ok_data(await call(client, "audit_verify_chain", {}))
    answers["merkle_finalize"] = ok_data(await call(client, "merkle_finalize", {"session_id": session}))
    answers["merkle_root"] = ok_data(
        await call(client, "merkle_root", {"session_id": session, "record_id": record["record_id"]})
    )
    answers["skill_list"] = ok_data(await call(client, "skill_list", {}))
    assert set(answers) == {tool.name for tool in TOOLS}
    assert answers["audit_verify_chain"]["valid"] is True
    assert answers["thought_record_list"]["records"][0]["record_id"] == record["record_id"]
    return answers


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_every_tool_works_over_http_in_both_eras(tmp_path: Path, era: str) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice")
    with running(env, tmp_path) as server:
        async with http_client(server.url, token, mode=era) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            await every_tool(client, era)
            version = client.protocol_version
    assert listed == {tool.name for tool in TOOLS}
    # "auto" probes server/discover: the stateless era; "legacy" is the initialize handshake.
    assert (version >= "2026") == (era == "auto"), version
    principals = {row["principal"] for row in query(tmp_path / "colibri.db", "SELECT principal FROM actions")}
    assert principals == {"alice"}


async def test_two_tokens_each_recorded_as_its_principal_and_stdio_as_local(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    alice, bob = make_token(env, "alice"), make_token(env, "bob")
    with running(env, tmp_path) as server:
        async with (
            http_client(server.url, alice) as first,
            http_client(server.url, bob, mode="auto") as second,
        ):
            for i in range(3):
                ok_data(await call(first, "task_create", {"title": f"alice {i}"}))
                ok_data(await call(second, "task_create", {"title": f"bob {i}"}))
    async with connect(env) as local:
        ok_data(await call(local, "task_create", {"title": "local 0"}))
    rows = query(
        tmp_path / "colibri.db", "SELECT arguments, principal FROM actions WHERE tool = 'task_create'"
    )
    by_principal = {(row["principal"], row["arguments"].split('"')[3].split()[0]) for row in rows}
    assert by_principal == {("alice", "alice"), ("bob", "bob"), ("local", "local")}
    assert len(rows) == 7
    # The verifiable log holds each call under the principal its row names.
    logged = query(
        tmp_path / "colibri.db",
        "SELECT a.sequence_no, a.correlation_id, a.tool, a.principal, a.arguments, a.outcome,"
        " a.result_hash, a.started_at, a.duration_ms, e.entry_hash FROM actions a"
        " JOIN log_entries e ON e.kind = 'action' AND e.ref = a.sequence_no",
    )
    assert {row["principal"] for row in logged} == {"alice", "bob", "local"}
    for row in logged:
        assert bytes(row["entry_hash"]) == stored_action_entry(*tuple(row)[:9]), dict(row)


async def test_a_read_token_sees_the_read_set_and_is_refused_writes_naming_its_scope(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    reader = make_token(env, "reader", "read")
    with running(env, tmp_path) as server:
        for era in ("legacy", "auto"):
            async with http_client(server.url, reader, mode=era) as client:
                listed = [tool.name for tool in (await client.list_tools()).tools]
                refused = chain_error(await call(client, "task_create", {"title": "no"}))
                ok_data(await call(client, "task_list", {}))
            assert sorted(listed) == sorted(admitted_tools(Mode.READONLY))
            assert refused["code"] == "TOOL_NOT_ADMITTED"
            assert "scope 'read'" in refused["message"] and refused["details"]["scope"] == "read"
    denied = query(
        tmp_path / "colibri.db",
        "SELECT principal, reason, reason_message FROM actions WHERE outcome = 'denied'",
    )
    assert [(row["principal"], row["reason"]) for row in denied] == [("reader", "scope"), ("reader", "scope")]
    assert all("scope 'read'" in row["reason_message"] for row in denied)  # the refusal's message, one line
    assert not query(tmp_path / "colibri.db", "SELECT 1 FROM tasks")


async def test_missing_wrong_expired_and_revoked_tokens_get_401_and_no_audit_row(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    good = make_token(env, "good")
    expired = make_token(env, "old", "write", "--expires-days", "1")
    revoked = make_token(env, "gone")
    with sqlite3.connect(tmp_path / "colibri.db") as db:
        db.execute("UPDATE access_tokens SET expires_at = ? WHERE name = 'old'", (int(time.time()) - 1,))
    assert colibri("token", "revoke", "gone", env=env).returncode == 0
    listing = colibri("token", "list", env=env).stdout
    assert "old\twrite\texpired" in listing and "gone\twrite\trevoked" in listing
    assert good not in listing and "col_" not in listing

    with running(env, tmp_path) as server:
        async with httpx2.AsyncClient(timeout=10) as http:
            for presented in (None, "col_not-a-real-token", good[:-1] + "x", expired, revoked, "Basic abc"):
                headers = dict(MCP_HEADERS)
                if presented is not None:
                    headers["Authorization"] = presented if " " in presented else f"Bearer {presented}"
                answer = await http.post(server.url, json=INITIALIZE, headers=headers)
                assert answer.status_code == 401, (presented, answer.text)
                challenge = answer.headers["www-authenticate"]
                assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
            metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
            metadata = (await http.get(metadata_url)).json()
            assert metadata["resource"] == server.url
            assert metadata["bearer_methods_supported"] == ["header"]
        # The SDK client turns the 401 into a stand-in JSON-RPC error (it keeps no status), raised
        # out of its task groups; the status it got is recorded on the way.
        statuses: list[int] = []

        async def record(response: httpx2.Response) -> None:
            statuses.append(response.status_code)

        refused = pytest.RaisesExc(MCPError, check=lambda exc: exc.error.code == INTERNAL_ERROR)
        with pytest.RaisesGroup(refused, flatten_subgroups=True):
            async with (
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {revoked}"}, event_hooks={"response": [record]}
                ) as revoked_http,
                Client(streamable_http_client(server.url, http_client=revoked_http), mode="legacy") as client,
            ):
                await client.list_tools()
        assert statuses == [401], "the SDK's error stands for the server's 401"
        assert get(f"{server.base}/healthz")[0] == 200
        async with http_client(server.url, good) as client:
            ok_data(await call(client, "server_ping"))
    assert [row["principal"] for row in query(tmp_path / "colibri.db", "SELECT principal FROM actions")] == [
        "good"
    ]


async def test_each_post_is_answered_with_one_json_body(tmp_path: Path) -> None:
    """No tool sends anything before its answer, so a call is one JSON body, not an event stream
    (half the server's work per call); a client that accepts only JSON is served too."""
    env = http_env(tmp_path)
    token = make_token(env, "alice")
    headers = {**MCP_HEADERS, "Accept": "application/json", "Authorization": f"Bearer {token}"}
    with running(env, tmp_path) as server:
        async with httpx2.AsyncClient(timeout=10) as http:
            opened = await http.post(server.url, json=INITIALIZE, headers=headers)
            assert opened.status_code == 200, opened.text
            headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
            headers["Mcp-Protocol-Version"] = opened.json()["result"]["protocolVersion"]
            notified = await http.post(
                server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
            )
            assert notified.status_code == 202, notified.text
            request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "server_ping"}}
            answered = await http.post(server.url, json=request, headers=headers)
    assert opened.headers["content-type"] == "application/json"
    assert answered.status_code == 200 and answered.headers["content-type"] == "application/json"
    body = answered.json()
    assert body["id"] == 2 and body["result"]["structuredContent"]["ok"] is True


async def test_a_forged_host_or_origin_is_refused(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice")
    with running(env, tmp_path) as server:
        async with httpx2.AsyncClient(timeout=10) as http:
            auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
            fine = await http.post(server.url, json=INITIALIZE, headers=auth)
            forged_host = await http.post(
                server.url, json=INITIALIZE, headers={**auth, "Host": "evil.example"}
            )
            forged_origin = await http.post(
                server.url, json=INITIALIZE, headers={**auth, "Origin": "http://evil.example"}
            )
    assert fine.status_code == 200
    assert forged_host.status_code == 421, forged_host.text
    assert forged_origin.status_code == 403, forged_origin.text
    assert not query(tmp_path / "colibri.db", "SELECT 1 FROM actions")


async def test_a_wildcard_bind_accepts_loopback_names_and_refuses_others(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice")
    with running(env, tmp_path, host="0.0.0.0") as server:
        async with httpx2.AsyncClient(timeout=10) as http:
            auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
            answers = {
                host: (
                    await http.post(server.url, json=INITIALIZE, headers={**auth, "Host": host})
                ).status_code
                for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", "evil.example")
            }
    assert answers == {f"localhost:{server.port}": 200, f"127.0.0.1:{server.port}": 200, "evil.example": 421}


def test_no_auth_is_refused_for_a_non_loopback_address(tmp_path: Path) -> None:
    done = colibri("serve", "--http", "0.0.0.0:8765", "--no-auth", env=http_env(tmp_path))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "not a loopback address" in done.stderr
    assert done.stdout == ""


async def test_no_auth_on_loopback_serves_as_local(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    with running(env, tmp_path, "--no-auth") as server:
        async with http_client(server.url, None) as client:
            ok_data(await call(client, "task_create", {"title": "x"}))
    rows = query(tmp_path / "colibri.db", "SELECT principal FROM actions")
    assert [row["principal"] for row in rows] == ["local"]
