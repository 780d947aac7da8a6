"""What a client sees when its server goes away under it — the one failure a burst helper that
kills or cuts off a server may swallow. Anything else (an `AssertionError` above all) is raised."""

from __future__ import annotations

import anyio
import httpx2
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

_LOST = (
    httpx2.TransportError,  # refused, reset, or the stream cut mid-answer
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    ConnectionError,
)


def lost_connection(exc: BaseException) -> bool:
    """Whether `exc` — or every exception of a group, as task groups raise them — is a lost
    connection to the server."""
    if isinstance(exc, BaseExceptionGroup):
        return all(lost_connection(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    return isinstance(exc, _LOST)
