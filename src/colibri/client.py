"""A one-shot client: start `colibri serve` with this environment, call one tool, return the envelope.

The server's stderr is kept aside while it runs: shown afterwards when the call went through (a
first boot's key warning matters), and read for the reason when the server ended before it
answered — the SDK's "connection closed" says nothing of why (SPEC §14: start-up errors are one
line, and the exit code says whether it was the configuration).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from typing import IO, Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED

from colibri.pipes import ProcessTransport

# What the server's log lines carry before the message (serving/logs.py's format).
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ [A-Z]+ [\w.]+: ")


class ServerDidNotStart(Exception):
    """The server ended before it answered; the message is its own last word on stderr."""

    def __init__(self, reason: str, exit_code: int | None) -> None:
        super().__init__(reason)
        self.exit_code = exit_code


def server_parameters(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "colibri", "serve"],
        env=dict(os.environ) if env is None else env,
    )


async def call_once(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        server = ProcessTransport(server_parameters(), stderr=errlog)
        try:
            async with Client(server) as client:
                await client.list_tools()
                # resources/list is answered once the server's phase 2 is over (tools/list at once,
                # from the kept declarations), so the call sees it booted; a server that serves no
                # skills (MINIMAL, a failed boot) refuses it after the same wait, which is all we want.
                try:
                    await client.list_resources()
                except MCPError as exc:
                    if _connection_closed(exc):
                        raise
                result = await client.call_tool(tool, arguments)
        except (MCPError, BaseExceptionGroup) as exc:
            if not _connection_closed(exc):
                raise
            raise ServerDidNotStart(_last_line(errlog), server.returncode) from None
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
    return _LOG_PREFIX.sub("", lines[-1]) if lines else "it exited without saying why"
