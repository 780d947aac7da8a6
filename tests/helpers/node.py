"""The Node side of the suites that drive Colibri with npm packages pinned in a lock file.

`make test` installs each folder's package-lock.json into its node_modules with `npm ci`. Without
node, npm or that install a suite skips with the reason, except under CI (`CI=true`), where a
missing part fails: CI must prove interop, not skip it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.helpers import missing_part


def require_node(folder: Path, packages: Iterable[str], suite: str) -> str:
    """The node executable, once `packages` are installed in `folder`; else skip (fail under CI)."""
    node = shutil.which("node")
    node_modules = folder / "node_modules"
    problem = None
    if node is None or shutil.which("npm") is None:
        problem = f"node and npm are needed for the {suite} tests (install Node.js 20 or later)"
    else:
        missing = [name for name in packages if not (node_modules / name / "package.json").is_file()]
        if missing:
            problem = f"{', '.join(missing)} not installed in {node_modules}: run `make test` (npm ci)"
    if problem is not None:
        missing_part(f"the {suite} tests need what is missing: {problem}")
    assert node is not None
    return node


def run_client(
    node: str, folder: Path, spec: dict[str, Any], tmp_path: Path, timeout: float
) -> dict[str, Any]:
    """Run `folder`/client.mjs on `spec`; its report."""
    path = tmp_path / f"spec-{len(list(tmp_path.glob('spec-*.json')))}.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [node, str(folder / "client.mjs"), str(path)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"client.mjs failed ({done.returncode}): {done.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report
