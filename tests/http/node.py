"""The Node side of the HTTP suite: the pinned conformance suite and TypeScript SDK client.

`make test` installs tests/http/npm/package-lock.json into tests/http/npm/node_modules with
`npm ci`. Without node, npm or that install these tests skip with the reason, except under CI
(`CI=true`), where a missing part fails: CI must prove interop, not skip it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NPM = Path(__file__).resolve().parent / "npm"
NODE_MODULES = NPM / "node_modules"
PACKAGES = ("@modelcontextprotocol/sdk", "@modelcontextprotocol/conformance")


def require_node() -> str:
    node = shutil.which("node")
    problem = None
    if node is None or shutil.which("npm") is None:
        problem = "node and npm are needed for the HTTP interop tests (install Node.js 20 or later)"
    else:
        missing = [name for name in PACKAGES if not (NODE_MODULES / name / "package.json").is_file()]
        if missing:
            problem = f"{', '.join(missing)} not installed in {NODE_MODULES}: run `make test` (npm ci)"
    if problem is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the HTTP interop tests: {problem}")
        pytest.skip(problem)
    assert node is not None
    return node


def run_client(spec: dict[str, Any], tmp_path: Path, timeout: float = 180) -> dict[str, Any]:
    """Run client.mjs on `spec`; its report."""
    node = require_node()
    path = tmp_path / f"spec-{len(list(tmp_path.glob('spec-*.json')))}.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [node, str(NPM / "client.mjs"), str(path)],
        cwd=NPM,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"client.mjs failed ({done.returncode}): {done.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report


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
