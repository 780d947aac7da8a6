"""A one-shot client: start `colibri serve` with this environment, call one tool, return the envelope.

The server's stderr is kept aside while it runs: shown afterwards when the call went through (a
first boot's key warning matters), and read for the reason when the server went away before it
answered — the SDK's "connection closed" says nothing of why (SPEC §14: start-up errors are one line).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import IO, Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED


class ServerDidNotStart(Exception):
    """The server ended before it answered; the message is its own last word on stderr."""


def server_parameters(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "colibri", "serve"],
        env=dict(os.environ) if env is None else env,
    )


async def call_once(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with Client(stdio_client(server_parameters(), errlog=errlog)) as client:
                await (
                    client.list_tools()
                )  # returns once the server's phase 2 is over, so the call sees it booted
                result = await client.call_tool(tool, arguments)
        except (MCPError, BaseExceptionGroup) as exc:
            if not _connection_closed(exc):
                raise
            raise ServerDidNotStart(_last_line(errlog)) from None
        errlog.seek(0)
        sys.stderr.write(errlog.read())
    envelope = result.structured_content
    if not isinstance(envelope, dict):
        return {
            "ok": False,
            "error": {
                "code": "NO_ENVELOPE",
                "message": "the server returned no envelope",
                "details": {"content": [c.model_dump() for c in result.content]},
            },
        }
    return envelope


def _connection_closed(exc: BaseException) -> bool:
    """True when `exc` (or every exception of a group) says the server's end closed."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_connection_closed(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _last_line(errlog: IO[str]) -> str:
    errlog.seek(0)
    lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    return lines[-1] if lines else "it exited without saying why"
