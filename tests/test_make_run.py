"""`make run` is the README's first command; an MCP client may launch it directly, so its
stdout must be the JSON-RPC wire and nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import INITIALIZE, clean_env, missing_part

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "server_ping", "arguments": {}}},
]


def _checkout_copy(folder: Path) -> Path:
    """A checkout in which `make run` may make its `data/`: the same Makefile, and the checkout's
    own pyproject.toml and .venv, linked. The venv must be up to date: a copy holds no source to
    install from, so make must find nothing to do there."""
    stamp, pyproject = ROOT / ".venv" / ".installed", ROOT / "pyproject.toml"
    if not stamp.exists() or stamp.stat().st_mtime < pyproject.stat().st_mtime:
        missing_part(f"an up-to-date venv in {ROOT / '.venv'}: run `make test` (or `make run`) first")
    folder.mkdir()
    shutil.copy2(ROOT / "Makefile", folder / "Makefile")
    for name in ("pyproject.toml", ".venv"):
        (folder / name).symlink_to(ROOT / name)
    return folder


# For -C, make prints "Entering directory" on stdout before it reads the Makefile: only the command
# line can silence it, hence the README's `make -s -C DIR run`.
@pytest.mark.parametrize(
    "command",
    [
        ["make", "--no-print-directory", "run"],
        ["make", "-s", "-C", "DIR", "run"],
        ["make", "--no-print-directory", "-C", "DIR", "run"],
    ],
    ids=" ".join,
)
def test_make_run_serves_json_rpc_only_on_stdout(tmp_path: Path, command: list[str]) -> None:
    checkout = _checkout_copy(tmp_path / "checkout")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = [str(checkout) if part == "DIR" else part for part in command]
    stdin = "".join(json.dumps(request) + "\n" for request in REQUESTS)
    result = subprocess.run(
        command,
        cwd=checkout if "-C" not in command else elsewhere,
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
    assert (checkout / "data").is_dir(), "make run made its data folder in the copy, not the checkout"
