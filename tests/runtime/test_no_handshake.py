"""A request piped into `colibri serve` with neither the `initialize` handshake nor the 2026-07-28
envelope is refused with a message that says what is missing (the SDK's own answer was -32602
"Invalid request parameters" with empty data); one sent after the handshake is answered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import INITIALIZE, clean_env

ASKED = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "server_ping", "arguments": {}}},
    {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
]


def _served(tmp_path: Path, messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Every answer of a `colibri serve` given `messages` on stdin (then EOF), by id."""
    lines = "".join(json.dumps(message) + "\n" for message in messages)
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "serve"],
        input=lines,
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return {answer["id"]: answer for answer in answers}


@pytest.mark.parametrize("asked", ASKED, ids=lambda message: message["method"])
def test_a_request_without_a_handshake_says_what_is_missing(tmp_path: Path, asked: dict[str, Any]) -> None:
    error = _served(tmp_path, [asked])[asked["id"]]["error"]
    assert error["code"] == -32602
    message = error["message"]
    assert "send initialize first" in message, message
    assert "io.modelcontextprotocol/protocolVersion" in message and "2026-07-28" in message, message
    assert error["data"] == {
        "missing": "initialize",
        "handshake": {"method": "initialize", "protocolVersion": "2025-11-25"},
        "envelope": {
            "_meta": [
                "io.modelcontextprotocol/protocolVersion",
                "io.modelcontextprotocol/clientCapabilities",
            ],
            "protocolVersion": "2026-07-28",
        },
    }


def test_the_same_request_after_the_handshake_is_answered(tmp_path: Path) -> None:
    answers = _served(
        tmp_path, [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, ASKED[0]]
    )
    assert "error" not in answers[1], answers[1]
    assert any(tool["name"] == "server_ping" for tool in answers[1]["result"]["tools"])


def test_a_request_with_bad_params_after_the_handshake_keeps_the_sdks_answer(tmp_path: Path) -> None:
    """Only the missing handshake is reworded: malformed params still get -32602 from the SDK."""
    bad = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 7}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    error = _served(tmp_path, [INITIALIZE, initialized, bad])[2]["error"]
    assert error["code"] == -32602 and "initialize" not in error["message"], error
