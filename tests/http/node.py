"""The Node side of the HTTP suite: the pinned conformance suite and TypeScript SDK client
(tests/http/npm; see tests/helpers/node.py for how a missing part skips or, under CI, fails)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import node as node_support

NPM = Path(__file__).resolve().parent / "npm"
NODE_MODULES = NPM / "node_modules"
PACKAGES = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/conformance")


def require_node() -> str:
    return node_support.require_node(NPM, PACKAGES, "HTTP interop")


def run_client(spec: dict[str, Any], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    """Run client.mjs on `spec`; its report."""
    return node_support.run_client(require_node(), NPM, spec, tmp_path, timeout)


def run_conformance(url: str, scenario: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    node = require_node()
    cli = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return subprocess.run(
        [node, str(cli), "server", "--url", url, "--scenario", scenario],
        cwd=tmp_path,  # it writes results/ into its working directory
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
