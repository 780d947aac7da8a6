"""server_ping and server_health over a real subprocess (SPEC §3)."""

from __future__ import annotations

import sqlite3
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest

from tests.helpers import call, chain_error, clean_env, connect, ok_data, query
from tests.helpers.raw import PROTOCOL_VERSION, RawSession

pytestmark = pytest.mark.anyio

HEALTH_FIELDS = {"status": str, "version": str, "uptime_ms": int, "db_tables": int, "phase": str, "mode": str}


async def test_health_reports_exactly_six_fields(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect(server_env) as client:
        first = ok_data(await call(client, "server_health"))
        await anyio.sleep(0.05)
        second = ok_data(await call(client, "server_health", {"ignored": "extra fields are ignored"}))
    assert set(first) == set(HEALTH_FIELDS)
    for field, kind in HEALTH_FIELDS.items():
        assert type(first[field]) is kind, field
    assert first["status"] == "ok"
    assert first["version"] == version("colibri-mcp")
    assert first["phase"] == "phase2"
    assert first["mode"] == "FULL"
    assert second["uptime_ms"] >= first["uptime_ms"] + 50
    [(tables,)] = query(
        tmp_path / "colibri.db",
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    assert first["db_tables"] == tables > 0


async def test_ping_reports_version_mode_and_uptime(server_env: dict[str, str]) -> None:
    server_env["COLIBRI_MODE"] = "test"
    async with connect(server_env) as client:
        data = ok_data(await call(client, "server_ping"))
    assert set(data) == {"version", "mode", "uptime_ms"}
    assert data["version"] == version("colibri-mcp")
    assert data["mode"] == "TEST"
    assert data["uptime_ms"] >= 0


async def test_minimal_opens_no_database(server_env: dict[str, str], tmp_path: Path) -> None:
    server_env["COLIBRI_MODE"] = "MINIMAL"
    async with connect(server_env) as client:
        data = ok_data(await call(client, "server_health"))
    assert (data["mode"], data["phase"], data["db_tables"]) == ("MINIMAL", "phase2", 0)
    assert not (tmp_path / "colibri.db").exists()


async def test_test_mode_defaults_to_its_own_database(tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_MODE="TEST")
    del env["COLIBRI_DB_PATH"]
    async with connect(env, cwd=tmp_path) as client:
        ok_data(await call(client, "server_ping"))
    assert (tmp_path / "data" / "colibri.test.db").is_file()
    assert not (tmp_path / "data" / "colibri.db").exists()


async def test_unknown_tool_is_refused_with_its_name(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        error = chain_error(await call(client, "server_shutdown"))
    assert error["code"] == "UNKNOWN_TOOL"
    assert "server_shutdown" in error["message"]
    assert "tools/list" in error["message"]


@pytest.mark.parametrize("arguments", ["foo", 42, [1, 2], True])
def test_non_object_arguments_get_invalid_params(server_env: dict[str, str], arguments: object) -> None:
    session = RawSession(server_env)
    try:
        session.initialize()
        for tool in ("server_health", "server_ping"):
            reply = session.call_tool(tool, arguments)
            result = reply["result"]
            assert result["isError"] is True
            error = result["structuredContent"]["error"]
            assert error["code"] == "INVALID_PARAMS"
            assert "must be a JSON object" in error["message"]
            assert error["details"]["issues"][0].keys() == {"path", "message", "type"}
    finally:
        session.close()


def test_while_phase_2_runs_health_reports_the_declared_mode_with_phase1(tmp_path: Path) -> None:
    """ "Still starting" (declared mode, phase1) never looks like "boot failed" (MINIMAL, phase1)."""
    db = tmp_path / "held.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # phase 2 waits (busy timeout) until this lock goes
    session = RawSession(clean_env(tmp_path, COLIBRI_DB_PATH=str(db), COLIBRI_MODE="TEST"))
    try:
        session.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        starting = session.call_tool("server_health", {})["result"]["structuredContent"]["data"]
        pinged = session.call_tool("server_ping", {})["result"]["structuredContent"]["data"]
        holder.execute("COMMIT")
        holder.close()
        session.request("resources/list")  # answered once phase 2 is over (tools/list at once)
        ready = session.call_tool("server_health", {})["result"]["structuredContent"]["data"]
    finally:
        holder.close()
        session.close()
    assert (starting["mode"], starting["phase"], starting["db_tables"]) == ("TEST", "phase1", 0)
    assert pinged["mode"] == "TEST"
    assert (ready["mode"], ready["phase"]) == ("TEST", "phase2")
    assert ready["db_tables"] > 0
