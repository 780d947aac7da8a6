"""Two servers on one file make one chain; a server killed mid-burst loses nothing it confirmed."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client

from tests.helpers import call, connect, ok_data

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PER_SERVER = 1_000


async def test_two_server_processes_append_one_linear_chain(server_env: dict[str, str]) -> None:
    written: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    async with connect(server_env) as first, connect(server_env) as second:
        shared = ok_data(await call(first, "audit_session_start", {"session_id": "shared"}))["session_id"]
        own = ok_data(await call(second, "audit_session_start", {"session_id": "own"}))["session_id"]

        async def append(client: Client, label: str) -> None:
            for i in range(PER_SERVER):
                session = shared if i % 2 else own
                args = {"session_id": session, "kind": "observation", "content": f"{label}-{i}"}
                written[label].append(ok_data(await call(client, "thought_record", args)))

        async with anyio.create_task_group() as group:
            group.start_soon(append, first, "a")
            group.start_soon(append, second, "b")

        seqs = sorted(r["seq"] for rs in written.values() for r in rs)
        assert seqs == list(range(1, 2 * PER_SERVER + 1))  # no seq twice, none lost
        a_seqs = [r["seq"] for r in written["a"]]
        assert a_seqs != list(range(a_seqs[0], a_seqs[0] + PER_SERVER)), "the two writers never interleaved"

        report = ok_data(await call(second, "audit_verify_chain"))
        assert report["valid"] and report["checked"] == 2 * PER_SERVER
        by_seq = {r["seq"]: r for rs in written.values() for r in rs}
        for seq in range(2, 2 * PER_SERVER + 1):
            assert by_seq[seq]["prev_hash"] == by_seq[seq - 1]["hash"]
        assert report["head_hash"] == by_seq[2 * PER_SERVER]["hash"]
        for session in (shared, own):
            # A session scope checks the whole chain its records are linked into.
            scoped = ok_data(await call(first, "audit_verify_chain", {"session_id": session}))
            assert scoped["valid"] and scoped["checked"] == 2 * PER_SERVER
            last = max((r for r in by_seq.values() if r["session_id"] == session), key=lambda r: r["seq"])
            assert scoped["head_hash"] == last["hash"]


class RawServer:
    """`colibri serve` driven with hand-written JSON-RPC lines, so requests can be pipelined."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any]) -> None:
        await self.stdin.send(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        line = await self.stdout.receive_until(b"\n", 10_000_000)
        message: dict[str, Any] = json.loads(line)
        return message

    async def handshake(self) -> None:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "crash", "version": "1"},
        }
        await self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert "result" in await self.receive()
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.send({"jsonrpc": "2.0", "id": -1, "method": "resources/list"})  # answered after phase 2
        assert "result" in await self.receive()


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_kill_9_mid_burst_keeps_every_confirmed_record_and_a_valid_chain(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        session = ok_data(await call(client, "audit_session_start"))["session_id"]

    burst, kill_after = 1_000, 120
    confirmed: list[dict[str, Any]] = []
    command = [sys.executable, "-m", "colibri", "serve"]
    async with await anyio.open_process(command, env=server_env, stderr=subprocess.DEVNULL) as process:
        server = RawServer(process)
        with anyio.fail_after(60):
            await server.handshake()
            for i in range(1, burst + 1):
                args = {"session_id": session, "kind": "decision", "content": f"burst {i}"}
                call_params = {"name": "thought_record", "arguments": args}
                await server.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call_params})
            while len(confirmed) < kill_after:
                message = await server.receive()
                envelope = message["result"]["structuredContent"]
                confirmed.append(ok_data(envelope))
            process.kill()  # SIGKILL: no cleanup, no goodbye
            assert await process.wait() == -9

    assert len(confirmed) == kill_after
    # Offline first, straight after the crash: the WAL the dead server left behind is read too.
    offline = subprocess.run(
        [sys.executable, "-m", "colibri", "verify", "--db", server_env["COLIBRI_DB_PATH"]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert offline.returncode == 0 and "first break:      none" in offline.stdout, offline
    async with connect(server_env) as client:
        report = ok_data(await call(client, "audit_verify_chain"))
        assert report["valid"], report
        stored, cursor = {}, None
        while True:
            page = ok_data(
                await call(
                    client, "thought_record_list", {"limit": 200} | ({"cursor": cursor} if cursor else {})
                )
            )
            stored.update({r["record_id"]: r for r in page["records"]})
            if (cursor := page["next_cursor"]) is None:
                break
        assert report["checked"] == len(stored) >= kill_after
        assert len(stored) < burst, "the kill landed after the burst was over"
        for record in confirmed:
            assert stored[record["record_id"]]["hash"] == record["hash"]
            assert stored[record["record_id"]]["seq"] == record["seq"]
        after = ok_data(
            await call(
                client, "thought_record", {"session_id": session, "kind": "reflection", "content": "after"}
            )
        )
        assert after["seq"] == len(stored) + 1 and ok_data(await call(client, "audit_verify_chain"))["valid"]
