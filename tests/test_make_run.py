"""`make run` is the README's first command; an MCP client may launch it directly, so its
stdout must be the JSON-RPC wire and nothing else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import INITIALIZE, clean_env

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "server_ping", "arguments": {}}},
]


# For -C, make prints "Entering directory" on stdout before it reads the Makefile: only the command
# line can silence it, hence the README's `make -s -C DIR run`.
MAKE_FROM_ELSEWHERE = [
    ["make", "-s", "-C", str(ROOT), "run"],
    ["make", "--no-print-directory", "-C", str(ROOT), "run"],
]


@pytest.mark.parametrize(
    "command", [["make", "--no-print-directory", "run"], *MAKE_FROM_ELSEWHERE], ids=" ".join
)
def test_make_run_serves_json_rpc_only_on_stdout(tmp_path: Path, command: list[str]) -> None:
    stdin = "".join(json.dumps(request) + "\n" for request in REQUESTS)
    result = subprocess.run(
        command,
        cwd=ROOT if "-C" not in command else tmp_path,
        input=stdin.encode(),
        capture_output=True,
        env=clean_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    assert [message.get("id") for message in messages] == [1, 2]
    assert messages[1]["result"]["structuredContent"]["ok"] is True
    assert b"serving MCP on stdio" in result.stderr
