"""A tools/call taken by the lean lane (lean.py), as the `Caller` of its downstream call.

Its progress and log notifications are written to the client at once, under the client's own
progress token; a downstream's own requests (sampling, elicitation, roots) go to the connection the
SDK serves, or, for a 2026-era call, become input requests of the call's own rounds (rounds.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeGuard

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from opentelemetry.trace import Span

from colibri.core.identity import Identity
from colibri.switchboard.base import Abandon, Caller, ResultT
from colibri.switchboard.faces.held import Held
from colibri.switchboard.routing import LOCAL, Route

Send = Callable[[dict[str, Any]], None]
# How a 2026-era call asks its client for input: in rounds of the call itself (rounds.py).
Ask = Callable[[types.ServerRequest, type[ResultT]], Awaitable[ResultT]]


@dataclass(slots=True)
class LeanCall:
    """A tools/call the lean lane took: the client's request and how far it has come."""

    request_id: types.RequestId
    name: str
    arguments: dict[str, Any] | None
    token: object
    modern: bool
    params: dict[str, Any]
    route: Route | None = None
    caller: LeanCaller | None = None
    task: asyncio.Task[None] | None = None
    abandon: Abandon | None = None
    cancelled: bool = False
    held: Held | None = None  # a 2026-era call whose downstream asked for input: answered in rounds
    span: Span | None = None  # its OpenTelemetry span, while tracing is on
    who: str | Identity = LOCAL  # who asked: over HTTP, the Identity the token proved


class LeanCaller:
    """A call taken by the lean lane as the `Caller` of its downstream call."""

    def __init__(
        self,
        send: Send,
        default_caller: Callable[[], Caller | None],
        token: object,
        ask: Ask[Any] | None = None,
    ) -> None:
        self._send = send
        self._default_caller = default_caller
        self._token = token if valid_id(token) else None
        self._ask = ask

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.tell(progress, total, message)

    def tell(self, progress: float, total: float | None, message: str | None) -> None:
        """`progress`, sent at once: it reaches the client before an answer written after it."""
        if self._token is None:
            return
        params: dict[str, Any] = {"progressToken": self._token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        self._send({"jsonrpc": "2.0", "method": "notifications/message", "params": data})

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        if self._ask is not None:
            answer: ResultT = await self._ask(request, result_type)
            return answer
        # A downstream's own request during a handshake-era call goes to the connection the SDK
        # knows: on stdio, where the lean lane runs, the one connection, whose call this is.
        caller = self._default_caller()
        if caller is None:
            raise MCPError(INVALID_REQUEST, f"no client is connected to answer {request.method}")
        return await caller.request(request, result_type)


def valid_id(value: object) -> TypeGuard[types.RequestId]:
    """Whether `value` can be a JSON-RPC request id (or progress token): a string or an integer."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
