"""`@modelcontextprotocol/server-everything`, pinned in tests/switchboard/npm and installed by the Makefile.

Outside CI a missing install skips the tests that need it, saying how to install it; with CI=true it
fails them, as a suite whose part is missing must.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.helpers import missing_part

NPM_FOLDER = Path(__file__).with_name("npm")
EVERYTHING = NPM_FOLDER / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def everything_entry() -> dict[str, Any]:
    """The config entry of server-everything over stdio; skips (fails in CI) when it is not installed."""
    node = shutil.which("node")
    if node is None or not EVERYTHING.exists():
        missing = "node" if node is None else str(EVERYTHING)
        message = f"{missing} is missing; run `make npm` (npm ci in {NPM_FOLDER})"
        missing_part(message)
    return {"command": node, "args": [str(EVERYTHING), "stdio"]}


TS_CLIENT = NPM_FOLDER / "ts_client.mjs"


def node() -> str:
    """The node binary (the TypeScript SDK client runs on it); skips, or fails in CI, without it."""
    everything_entry()
    found = shutil.which("node")
    assert found is not None
    return found
