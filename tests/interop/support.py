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

import pytest

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
PACKAGES = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector")
COLIBRI = str(Path(sys.executable).with_name("colibri"))


def require_node() -> str:
    """The node executable, once the pinned packages are installed; else skip (fail under CI)."""
    node = shutil.which("node")
    problem = None
    if node is None or shutil.which("npm") is None:
        problem = "node and npm are needed for the interop tests (install Node.js 20 or later)"
    else:
        missing = [name for name in PACKAGES if not (NODE_MODULES / name / "package.json").is_file()]
        if missing:
            problem = f"{', '.join(missing)} not installed in {NODE_MODULES}: run `make test` (npm ci)"
    if problem is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the interop tests: {problem}")
        pytest.skip(problem)
    assert node is not None
    return node


def run_client(spec: dict[str, Any], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    """Run client.mjs on `spec`; its report."""
    node = require_node()
    path = tmp_path / f"spec-{len(list(tmp_path.glob('spec-*.json')))}.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [node, str(HERE / "client.mjs"), str(path)],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"client.mjs failed ({done.returncode}): {done.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def inspector(args: list[str], home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`npx @modelcontextprotocol/inspector --cli ARGS...` from the pinned install (no network)."""
    require_node()
    npx = shutil.which("npx")
    assert npx is not None, "npx comes with npm"
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")}
    return subprocess.run(
        [npx, "--no", "@modelcontextprotocol/inspector", "--cli", *args],
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
    assert entry["isError"] is (envelope.get("ok") is not True), entry
    return envelope
