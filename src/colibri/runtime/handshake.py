"""A request that comes with no session says what is missing.

The SDK refuses a request sent before the `initialize` handshake (and without the 2026-07-28
envelope, which would have opened a session of its own) with -32602 "Invalid request parameters"
and empty data: the shape its older union validation produced, which tells someone piping
`tools/list` into `colibri serve` nothing. This middleware is the one place that answer is
reworded; the code stays -32602, which clients may key on.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, INVALID_PARAMS, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS

# What the SDK's init gate raises (mcp/server/runner.py); malformed params reach a middleware as
# pydantic's ValidationError instead, so this shape with no handshake on record is the gate's.
_GATE_MESSAGE = "Invalid request parameters"

NO_SESSION = (
    f"no session: send initialize first (protocolVersion {LATEST_HANDSHAKE_VERSION}), then "
    "notifications/initialized, then this request; or give each request the "
    f"{LATEST_MODERN_VERSION} envelope, params._meta with {PROTOCOL_VERSION_META_KEY} "
    f'"{LATEST_MODERN_VERSION}" and {CLIENT_CAPABILITIES_META_KEY}'
)
NO_SESSION_DATA = {
    "missing": "initialize",
    "handshake": {"method": "initialize", "protocolVersion": LATEST_HANDSHAKE_VERSION},
    "envelope": {
        "_meta": [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY],
        "protocolVersion": LATEST_MODERN_VERSION,
    },
}


class NoSessionMessage:
    """Turns the SDK's empty -32602 for a request before the handshake into one that says why."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if _is_the_init_gate(exc, ctx):
                raise MCPError(INVALID_PARAMS, NO_SESSION, NO_SESSION_DATA) from exc
            raise


def _is_the_init_gate(exc: MCPError, ctx: ServerRequestContext[Any, Any]) -> bool:
    error = exc.error
    return (
        error.code == INVALID_PARAMS
        and error.message == _GATE_MESSAGE
        and not error.data
        and ctx.session.client_params is None
        and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
    )
