"""The clients connected to the switchboard, as the downstreams' news and requests reach them.

Handshake-era connections are remembered (bounded) as they speak: list_changed notifications and
resource updates (to the connections subscribed to the URI) go to them. A client request a
downstream call serves is that call's `Caller` (`SessionCaller`): the downstream's log messages and
requests in the course of that call go to it alone (downstream/owners.py), never to another
connection.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri.switchboard.base import Caller, ResultT
from colibri.switchboard.faces.held import NEEDS

CHANGED: dict[str, types.ServerNotification] = {
    "tools": types.ToolListChangedNotification(),
    "resources": types.ResourceListChangedNotification(),
    "prompts": types.PromptListChangedNotification(),
}


class Peers:
    """Handshake-era connections seen so far (bounded): list_changed, logs and resource updates go there."""

    LIMIT = 256

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()
        self._subscribed: dict[str, set[str]] = {}

    @staticmethod
    def key(ctx: ServerRequestContext[Any, Any]) -> str:
        headers = getattr(ctx.request, "headers", None)
        return str(headers.get("mcp-session-id")) if headers is not None else "stdio"

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.method == "initialize":
            return
        key = self.key(ctx)
        self._sessions[key] = ctx.session
        self._sessions.move_to_end(key)
        while len(self._sessions) > self.LIMIT:
            forgotten, _ = self._sessions.popitem(last=False)
            self._forget(forgotten)

    def latest(self) -> Caller | None:
        """The connection that spoke last. Only the stdio face's lean lane asks it (lean_caller.py):
        there it is the one connection there is, the very client whose call it serves."""
        if not self._sessions:
            return None
        return SessionCaller(next(reversed(self._sessions.values())), None)

    def touch(self, key: str) -> None:
        """Session `key` spoke on the HTTP face's lean lane: the latest to have spoken, if known."""
        if key in self._sessions:
            self._sessions.move_to_end(key)

    def caller_of(self, key: str) -> Caller | None:
        """The connection of session `key` (its Mcp-Session-Id), where a request of a downstream
        serving that session's call goes (the HTTP face's lean lane): that session's, or none."""
        session = self._sessions.get(key)
        return None if session is None else SessionCaller(session, None)

    def subscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> bool:
        """Record the subscription; True when it is the first for `uri` (the downstream must be asked)."""
        return self.hold(self.key(ctx), uri)

    def unsubscribe(self, ctx: ServerRequestContext[Any, Any], uri: str) -> bool:
        """Drop the subscription; True when it was the last for `uri`."""
        return self.release(self.key(ctx), uri)

    def hold(self, holder: str, uri: str) -> bool:
        """`holder` (a connection, or a 2026-era listen stream) wants `uri`; True when it is the first."""
        holders = self._subscribed.setdefault(uri, set())
        first = not holders
        holders.add(holder)
        return first

    def release(self, holder: str, uri: str) -> bool:
        """`holder` no longer wants `uri`; True when nobody does any more."""
        holders = self._subscribed.get(uri, set())
        holders.discard(holder)
        if holders:
            return False
        self._subscribed.pop(uri, None)
        return True

    def holders(self, uri: str) -> set[str]:
        """Who holds a subscription to `uri` now (connections and listen streams)."""
        return set(self._subscribed.get(uri, ()))

    def _forget(self, key: str) -> None:
        for holders in self._subscribed.values():
            holders.discard(key)

    async def notify(self, notification: types.ServerNotification, only: set[str] | None = None) -> None:
        for key, session in list(self._sessions.items()):
            if only is not None and key not in only:
                continue
            try:
                await session.send_notification(notification)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._sessions.pop(key, None)
                self._forget(key)

    async def downstream_notified(self, server: str, notification: types.ServerNotification) -> None:
        if isinstance(notification, types.ResourceUpdatedNotification):
            await self.notify(notification, self._subscribed.get(notification.params.uri, set()))
        else:
            await self.notify(notification)


class SessionCaller:
    """A client connection as the `Caller` of a downstream call: progress, logs, relayed requests."""

    def __init__(self, session: ServerSession, request_id: types.RequestId | None) -> None:
        self._session = session
        self._request_id = request_id

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._request_id is not None:
            await self._session.report_progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        await self._session.send_notification(
            types.LoggingMessageNotification(params=params), self._request_id
        )

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        # As for a 2026-era client (held.py): a request the client did not declare it can answer is
        # refused to the downstream here, never sent (the spec's MUST for both eras).
        needed = NEEDS.get(request.method)
        declared = self._session.client_capabilities
        if needed is not None and (declared is None or getattr(declared, needed, None) is None):
            raise MCPError(
                INVALID_REQUEST,
                f"the client did not declare the {needed} capability, so it cannot be asked {request.method}",
            )
        metadata = (
            None if self._request_id is None else ServerMessageMetadata(related_request_id=self._request_id)
        )
        return await self._session.send_request(request, result_type, metadata=metadata)
