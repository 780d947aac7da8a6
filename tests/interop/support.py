"""Running the Node side of the interop suite: the official TypeScript SDK client and the MCP Inspector.

`make test` installs the pinned npm packages (package-lock.json) into tests/interop/node_modules
with `npm ci`. Without node, npm or that install the suite is skipped with the reason, except under
CI (`CI=true`), where a missing part is a failure: CI must prove interop, not skip it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import node as node_support

HERE = Path(__file__).resolve().parent
PACKAGES = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector")
COLIBRI = str(Path(sys.executable).with_name("colibri"))


def require_node() -> str:
    """The node executable, once the pinned packages are installed; else skip (fail under CI)."""
    return node_support.require_node(HERE, PACKAGES, "interop")


def run_client(spec: dict[str, Any], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    """Run client.mjs on `spec`; its report."""
    return node_support.run_client(require_node(), HERE, spec, tmp_path, timeout)


def inspector(args: list[str], home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`npx @modelcontextprotocol/inspector --cli ARGS...` from the pinned install (no network)."""
    require_node()
    npx = shutil.which("npx")
    assert npx is not None, "npx comes with npm"
    # Its own HOME: the Inspector keeps a catalog of servers there; no update checks, no notices.
    env = {**os.environ, "HOME": str(home), "npm_config_update_notifier": "false"}
    return subprocess.run(
        [npx, "--no", "--", "@modelcontextprotocol/inspector", "--cli", *args],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def seen(entry: dict[str, Any]) -> dict[str, Any]:
    """What the user of the TypeScript client sees of one call: callTool returned (never threw), and
    the envelope is in the JSON text block and, wherever present, identical in structuredContent."""
    assert entry["threw"] is None, (
        f"callTool threw for {entry['tool']}({entry['arguments']}): {entry['threw']}"
    )
    assert len(entry["text"]) == 1, entry
    envelope: dict[str, Any] = json.loads(entry["text"][0])
    if entry["structuredContent"] is not None:
        assert entry["structuredContent"] == envelope, entry
    if "ok" in envelope:  # a Colibri envelope, not a third-party downstream's own result
        assert entry["isError"] is (envelope["ok"] is not True), entry
    return envelope
