"""The actions table: one row per executed call; a failing sink never changes a response."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from tests.helpers import call, clean_env, connect, ok_data, query

pytestmark = pytest.mark.anyio


def _rows(db: Path) -> list[sqlite3.Row]:
    return query(db, "SELECT * FROM actions ORDER BY sequence_no")


async def test_each_executed_call_leaves_one_closed_row(tmp_path: Path) -> None:
    async with connect(clean_env(tmp_path)) as client:
        results = [
            await client.call_tool(name, {}) for name in ("server_ping", "server_health", "server_ping")
        ]
        await client.call_tool("no_such_tool", {})  # refused before execution: no row
    rows = _rows(tmp_path / "colibri.db")
    assert [row["tool"] for row in rows] == ["server_ping", "server_health", "server_ping"]
    sequence = [row["sequence_no"] for row in rows]
    assert sequence == sorted(set(sequence))
    for row, result in zip(rows, results, strict=True):
        assert row["outcome"] == "ok"
        assert row["arguments"] == "{}"
        assert len(row["correlation_id"]) == 36
        assert row["duration_ms"] >= 0
        text = result.content[0].text  # type: ignore[union-attr]
        assert row["result_hash"] == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("event", ["INSERT", "UPDATE"])
async def test_a_failing_audit_sink_leaves_the_response_unchanged(tmp_path: Path, event: str) -> None:
    env = clean_env(tmp_path)
    async with connect(env) as client:
        healthy = ok_data(await call(client, "server_ping"))
    query(
        tmp_path / "colibri.db",
        f"CREATE TRIGGER sink_down BEFORE {event} ON actions BEGIN SELECT RAISE(ABORT, 'sink down'); END",
    )
    async with connect(env) as client:
        for _ in range(3):
            data = ok_data(await call(client, "server_ping"))
            assert data.keys() == healthy.keys() and data["mode"] == "FULL"


# "legacy" is the initialize handshake; "auto" probes server/discover and takes the stateless era.
@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_both_protocol_eras(tmp_path: Path, mode: str, era: str) -> None:
    async with connect(clean_env(tmp_path), mode=mode) as client:
        agreed = client.protocol_version
        data = ok_data(await call(client, "server_health"))
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert agreed == era
    assert data["phase"] == "phase2"
    assert {"server_ping", "server_health"} <= names


async def test_an_inline_call_is_audited_soon_while_the_server_runs(tmp_path: Path) -> None:
    """server_ping answers without the database; its row follows, written by the server's flusher."""
    async with connect(clean_env(tmp_path)) as client:
        ok_data(await call(client, "server_ping"))
        deadline = time.monotonic() + 5
        while not _rows(tmp_path / "colibri.db"):
            assert time.monotonic() < deadline, "the ping's audit row was not written while serving"
            await anyio.sleep(0.05)
        [row] = _rows(tmp_path / "colibri.db")
        assert (row["tool"], row["outcome"], row["arguments"]) == ("server_ping", "ok", "{}")
