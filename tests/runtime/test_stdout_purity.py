"""Every byte the server writes to stdout is JSON-RPC, line by line, whatever it is asked."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import clean_env
from tests.helpers.raw import RawSession

HOSTILE_ARGUMENTS: list[object] = [
    {},
    {"title": "", "session_id": 7, "limit": -1, "kind": "nonsense"},
    {"content": "x" * 70_000, "title": "y" * 300},
    "not an object",
    [1, 2, 3],
    None,
]


def test_a_full_session_writes_only_json_rpc_to_stdout(tmp_path: Path) -> None:
    session = RawSession(clean_env(tmp_path, COLIBRI_LOG_LEVEL="debug"))
    session.initialize()
    tools = [tool["name"] for tool in session.request("tools/list")["result"]["tools"]]
    for name in [*tools, "no_such_tool"]:
        for arguments in HOSTILE_ARGUMENTS:
            session.call_tool(name, arguments)
    session.request("no/such/method")
    session.request("tools/call", {"arguments": {}})  # no tool name at all
    session.send("this line is not JSON")
    session.request("ping")
    code, _, stderr = session.close()

    assert code == 0
    assert len(session.stdout_lines) >= len(tools) * len(HOSTILE_ARGUMENTS)
    for line in session.stdout_lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        assert "result" in message or "error" in message or "method" in message
    assert b"dispatch tool=" in stderr, "debug logging was on and went to stderr"
