"""Test helpers shared by every suite: a real `colibri serve` subprocess driven by the SDK client."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing, suppress
from pathlib import Path
from typing import Any, NoReturn

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

# An initialize request and the headers of a Streamable HTTP POST, for tests that post by hand
# what the SDK client would send.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def missing_part(message: str) -> NoReturn:
    """A part a suite needs is missing: fail under CI, which must run every suite; skip elsewhere."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def clean_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COLIBRI_")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(
        COLIBRI_DB_PATH=str(tmp_path / "colibri.db"),
        COLIBRI_SKILLS_DIR=str(tmp_path / "skills"),
        HOME=str(home),
    )
    env.update(overrides)
    if "COLIBRI_DB_URL" in env and "COLIBRI_SIGNING_KEY" not in env:
        # A server on PostgreSQL refuses to start without a named key (SPEC §11: no database
        # folder to keep one in); every process of the test shares this one, as replicas must.
        env["COLIBRI_SIGNING_KEY"] = str(signing_key(tmp_path))
    return env


def colibri(
    *args: str, env: dict[str, str], timeout: float = 120, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The `colibri` command as a subprocess, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "colibri", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def signing_key(folder: Path) -> Path:
    """A signer key file in `folder`, made once (later calls return the same file)."""
    from colibri.domains.log.keys import write_key_file
    from colibri.domains.log.note import Signer

    path = folder / "signing.key"
    if not path.exists():
        write_key_file(path, Signer.generate("colibri-test"))
    return path


def serve_params(env: dict[str, str], cwd: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "colibri", "serve"], env=env, cwd=cwd)


@asynccontextmanager
async def connect(
    env: dict[str, str], *, mode: str = "legacy", cwd: Path | None = None
) -> AsyncIterator[Client]:
    """A connected SDK client to a fresh `colibri serve` subprocess, its phase 2 over (`booted`)."""
    async with Client(serve_params(env, cwd), mode=mode, read_timeout_seconds=30) as client:
        await client.list_tools()
        await booted(client)
        yield client


async def booted(client: Client) -> None:
    """Returns once the server's phase 2 is over (bounded, as its wait is). tools/list answers at
    once from the kept declarations (SPEC §25); resources/list is answered only after phase 2
    (SPEC §1.3), and refused after the same wait by a server that serves no skills (MINIMAL, a
    failed boot): either answer says phase 2 is over."""
    with suppress(MCPError):
        await client.list_resources()


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The structured envelope, checked against the JSON text block that must mirror it."""
    structured = result.structured_content
    assert isinstance(structured, dict), f"no structured envelope in {result!r}"
    assert len(result.content) == 1 and result.content[0].type == "text"
    assert json.loads(result.content[0].text) == structured
    assert result.is_error == (structured.get("ok") is not True)
    return structured


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return envelope(await client.call_tool(tool, arguments or {}))


def ok_data(env: dict[str, Any]) -> Any:
    """`data` of a success envelope, failing the test with the envelope when it is not one."""
    assert env.get("ok") is True, env
    data = env["data"]
    assert not (isinstance(data, dict) and data.get("ok") is False), env
    return data


def domain_error(env: dict[str, Any]) -> dict[str, Any]:
    """The Pattern B error inside a success envelope."""
    assert env.get("ok") is True and env["data"].get("ok") is False, env
    return env["data"]["error"]


def chain_error(env: dict[str, Any]) -> dict[str, Any]:
    """The Pattern A error."""
    assert env.get("ok") is False, env
    return env["error"]


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    """Run one statement on its own connection, closed at once (an open handle keeps the WAL alive)."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql, params))
