"""Phase 1 answers tools/list from the kept declarations alone (SPEC §25), exactly as the full server
lists its tools: the same bytes, in both protocol eras, while phase 2 is held back; and a call sent
meanwhile is answered, correctly, once phase 2 is done."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from colibri.core.modes import Mode
from colibri.runtime.server import describe
from colibri.tools import snapshot
from colibri.tools.catalog import TOOLS
from colibri.tools.snapshot import Declared
from tests.helpers import clean_env
from tests.helpers.raw import PROTOCOL_VERSION, RawSession

MODERN = {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: {}}


def _full_tools(mode: Mode) -> str:
    """The tools a server whose tools are all loaded lists: each catalogue tool described from its
    own declaration and the schemas its models make now, as the SDK puts a tool on the wire."""
    made = snapshot.made(TOOLS)
    tools = [describe(Declared.kept(tool.name, made[tool.name])) for tool in TOOLS if tool.admitted_in(mode)]
    wire = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in tools]
    # The SDK writes every frame with its keys sorted, so the content decides the bytes.
    return json.dumps(sorted(wire, key=lambda tool: tool["name"]), sort_keys=True)


def _listed(session: RawSession, era: str) -> dict[str, Any]:
    if era == "legacy":
        session.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return session.request("tools/list")
    return session.request("tools/list", {"_meta": MODERN})


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_phase_1_lists_the_full_servers_tools_and_a_call_waits_for_phase_2(tmp_path: Path, era: str) -> None:
    db = tmp_path / "held.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # phase 2 waits (busy timeout) until this lock goes
    session = RawSession(clean_env(tmp_path, COLIBRI_DB_PATH=str(db)))
    try:
        answer = _listed(session, era)
        listed_at = len(session.stdout_lines)
        meta = {} if era == "legacy" else {"_meta": MODERN}
        asked = session.request("tools/call", {"name": "server_health", "arguments": {}, **meta})
        health = asked["result"]["structuredContent"]["data"]
        session.send(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "tools/call",
                "params": {"name": "task_create", "arguments": {"title": "sent in phase 1"}, **meta},
            }
        )
        holder.execute("COMMIT")
        created = session.wait_for(99, timeout=15)["result"]
        after = session.request("tools/list", meta or None)  # phase 2 is over: the full server's list
    finally:
        holder.close()
        session.close()
    # Answered while phase 2 could not finish: from the declarations, not after the database.
    assert (health["mode"], health["phase"]) == ("FULL", "phase1")
    assert json.dumps(answer["result"]["tools"], sort_keys=True) == _full_tools(Mode.FULL)
    assert json.dumps(after["result"]) == json.dumps(answer["result"])
    # The bytes on the wire, not only the parsed list: the SDK serialised it as the full server would.
    line = session.stdout_lines[listed_at - 1]
    assert json.dumps(answer["result"], separators=(",", ":"), ensure_ascii=False).encode() in line
    assert created["isError"] is False, created
    task = created["structuredContent"]["data"]
    assert (task["id"], task["title"], task["version"]) == ("T-1", "sent in phase 1", 1)
