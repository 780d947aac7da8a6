"""The Node side of the HTTP suite: the pinned conformance suite and TypeScript SDK client
(tests/http/npm; see tests/helpers/node.py for how a missing part skips or, under CI, fails)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import missing_part
from tests.helpers import node as node_support

NPM = Path(__file__).resolve().parent / "npm"
NODE_MODULES = NPM / "node_modules"
PACKAGES = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/conformance")
# The conformance suite needs Node.js 22: `make node22` installs it from npm (the `node` package).
NODE22 = Path(__file__).resolve().parent / "node22" / "node_modules" / ".bin" / "node"


def require_node() -> str:
    return node_support.require_node(NPM, PACKAGES, "HTTP interop")


def run_client(spec: dict[str, Any], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    """Run client.mjs on `spec`; its report."""
    return node_support.run_client(require_node(), NPM, spec, tmp_path, timeout)


def require_node22() -> str:
    """Node.js 22 from tests/http/node22, once the conformance suite is installed too."""
    require_node()
    if not NODE22.exists():
        missing_part(f"the conformance suite needs Node.js 22, not found at {NODE22}: run `make node22`")
    return str(NODE22)


def run_conformance(url: str, scenario: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    node = require_node22()
    cli = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return subprocess.run(
        [node, str(cli), "server", "--url", url, "--scenario", scenario],
        cwd=tmp_path,  # it writes results/ into its working directory
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
