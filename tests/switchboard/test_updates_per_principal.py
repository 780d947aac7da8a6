"""Resource updates go only to sessions that subscribed and whose principal may read that server,
and a listen stream is admitted like any request (SPEC §21).

Two tokens over HTTP subscribe to a fault server's resource; while a reloaded policy denies one of
them that server, an update reaches only the other, and once the policy admits it again, the next
update reaches both. A 2026-era client over stdio (principal `local`) is refused a listen stream
naming a resource of a server its policy denies, and the refusal is a `denied` row naming it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.switchboard.audit_helpers import calls
from tests.switchboard.everything import everything_entry
from tests.switchboard.helpers import (
    Downstreams,
    Inbox,
    free_port,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

OPEN_URI = "fault://open/status"
OTHER_URI = "fault://other/status"
ARCHITECTURE = "demo://resource/static/document/architecture.md"
HEALTH = {"liveness_s": 0.5, "readiness_s": 60, "check_timeout_s": 5, "restart_backoff_s": 0.2}


@asynccontextmanager
async def _client(url: str, token: str, inbox: Inbox) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(
            streamable_http_client(url, http_client=http), mode="legacy", message_handler=inbox.message
        ) as client,
    ):
        yield client


def _updates(inbox: Inbox) -> int:
    return sum(isinstance(n, types.ResourceUpdatedNotification) for n in inbox.notifications)


async def _reload(
    board: subprocess.Popen[bytes], config: Path, raw: dict[str, Any], client: Client, listed: bool
) -> None:
    """Write the config, SIGHUP, and wait until `client` is (or is not) shown the open resource."""
    config.write_text(json.dumps(raw))
    board.send_signal(signal.SIGHUP)
    with anyio.fail_after(30):
        while (OPEN_URI in {r.uri for r in (await client.list_resources()).resources}) != listed:
            await anyio.sleep(0.05)


async def test_an_update_reaches_only_subscribers_whose_principal_may_read_its_server(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    admin, other = (create_token(name, tokens_file).stdout.strip() for name in ("admin", "other"))
    config = write_config(
        tmp_path,
        {"open": Downstreams(tmp_path).fault("open")},
        health=HEALTH,
        auth={"tokens_file": str(tokens_file), "policies": {"other": {"deny": ["evil.*"]}}},
    )
    admits = json.loads(config.read_text())
    denies = json.loads(config.read_text())
    denies["auth"]["policies"]["other"]["deny"].append("open:*")
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    admins, others = Inbox(), Inbox()
    try:
        wait_for_port(port, board)
        async with _client(url, admin, admins) as as_admin, _client(url, other, others) as as_other:
            await wait_for_state(as_admin, "open", "HEALTHY", timeout=30)
            await as_admin.subscribe_resource(OPEN_URI)
            await as_other.subscribe_resource(OPEN_URI)
            await _reload(board, config, denies, as_other, listed=False)
            await as_admin.call_tool("open.touch", {})
            await admins.wait_for(lambda: _updates(admins) == 1)
            await _reload(board, config, admits, as_other, listed=True)
            await as_admin.call_tool("open.touch", {})
            # Updates arrive in order on a session's stream: the second one's arrival shows the first
            # was never sent to `other`.
            await others.wait_for(lambda: _updates(others) >= 1)
            await admins.wait_for(lambda: _updates(admins) == 2)
    finally:
        assert stop(board) == 0
    assert _updates(others) == 1


async def test_a_listen_stream_naming_a_denied_server_is_refused_and_recorded(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"  # the policies' section; on stdio the caller is `local`
    create_token("unused", tokens_file)
    config = write_config(
        tmp_path,
        {"open": downstreams.fault("open"), "evil": everything_entry()},
        health=HEALTH,
        auth={"tokens_file": str(tokens_file), "policies": {"local": {"deny": ["evil.*"]}}},
        audit={"db": "audit/gateway.db"},
    )
    async with switchboard(config, mode="auto") as client:
        await wait_for_state(client, "open", "HEALTHY", timeout=30)
        with anyio.fail_after(10), pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=[OPEN_URI, ARCHITECTURE]) as stream:
                await anext(aiter(stream))
        # The server it may read: its stream is admitted, and its update arrives.
        async with client.listen(resource_subscriptions=[OPEN_URI]) as stream:
            await client.call_tool("open.touch", {})
            with anyio.fail_after(10):
                event = await anext(aiter(stream))
    assert refused.value.error.message.startswith("TOOL_NOT_ADMITTED: "), refused.value.error.message
    assert "auth.policies.local" in refused.value.error.message
    assert event.uri == OPEN_URI
    rows = [(row["tool"], row["outcome"], row["reason"]) for row in calls(tmp_path / "audit" / "gateway.db")]
    # The refused stream's one row is its refusal (none says `ok` for open); the admitted one's `ok`.
    listens = [row for row in rows if row[0].endswith(":subscriptions/listen")]
    assert listens == [
        ("evil:subscriptions/listen", "denied", "policy:local"),
        ("open:subscriptions/listen", "ok", None),
    ]


def _rewrite(config: Path, raw: dict[str, Any]) -> None:
    """A new config in place for --watch, its modification time moved on if the clock has not ticked."""
    old = config.stat()
    config.write_text(json.dumps(raw))
    new = config.stat()
    if new.st_mtime_ns == old.st_mtime_ns:
        os.utime(config, ns=(new.st_atime_ns, old.st_mtime_ns + 1_000_000))


async def test_a_listen_stream_hears_only_servers_its_principal_may_read_now(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    create_token("unused", tokens_file)
    auth = {"tokens_file": str(tokens_file), "policies": {"local": {"deny": ["evil.*"]}}}
    downstreams = Downstreams(tmp_path)
    servers = {"open": downstreams.fault("open"), "other": downstreams.fault("other")}
    config = write_config(tmp_path, servers, health=HEALTH, auth=auth)
    denies = json.loads(config.read_text())
    denies["auth"]["policies"]["local"]["deny"].append("open:resources/read")  # its tools stay callable
    heard: list[str] = []
    changed = anyio.Event()

    async with switchboard(config, mode="auto", extra_args=["--watch"]) as client:
        await wait_for_state(client, "open", "HEALTHY", timeout=30)
        await wait_for_state(client, "other", "HEALTHY", timeout=30)
        uris = [OPEN_URI, OTHER_URI]
        async with client.listen(resource_subscriptions=uris) as stream, anyio.create_task_group() as tasks:

            async def hear() -> None:
                async for event in stream:
                    heard.append(event.uri)
                    changed.set()

            tasks.start_soon(hear)
            _rewrite(config, denies)
            with anyio.fail_after(30):
                while OPEN_URI in {r.uri for r in (await client.list_resources()).resources}:
                    await anyio.sleep(0.05)
            await client.call_tool("open.touch", {})
            await client.call_tool("other.touch", {})
            # The servers' updates reach the stream in the order they were sent: once other's has
            # arrived, open's would have.
            with anyio.fail_after(10):
                await changed.wait()
            tasks.cancel_scope.cancel()
    assert heard == [OTHER_URI]
