"""Resource updates: `subscriptions/listen` streams for 2026-era clients, and who may hear an update.

The 2026 era has no resources/subscribe: a client names the URIs it wants in the filter of a
`subscriptions/listen` stream. The SDK's `ListenHandler` delivers the `ResourceUpdated` events
published on the bus to the streams that named their URI; this module makes those events exist
behind a gateway: while a stream names a URI, the server that owns it is subscribed (shared with
handshake-era subscribers through `Peers`, so each downstream is asked once), and every update a
downstream sends is published on the bus as well as sent to the handshake-era subscribers.

A listen stream is admitted and recorded once per server whose URIs it names
(`server:subscriptions/listen`, Passthrough.admit_listen), and refused whole if one is refused. An
update goes only to a subscriber whose principal may read the server that sent it, checked as it
arrives (a policy reloaded since, or a URI another server serves now): a stream sees its own
principal's updates, a handshake-era connection those of the principal that subscribed it
(`Readers`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from colibri.switchboard.base import Notified
from colibri.switchboard.faces.peers import Peers
from colibri.switchboard.routing import LOCAL, Passthrough, Who

log = logging.getLogger("colibri.switchboard")

UNSUBSCRIBE_WITHIN_S = 5.0
MAX_STREAMS = 1024  # listen streams open at once, as the SDK's own handler bounds them

Listen = Callable[[ServerRequestContext[Any, Any], types.SubscriptionsListenRequestParams], Awaitable[Any]]
PrincipalOf = Callable[[ServerRequestContext[Any, Any]], Who]  # the Identity, groups and all


@dataclass(frozen=True)
class ServerUpdated(ResourceUpdated):
    """A resource update, with the server that sent it (the streams' filter asks who may read it)."""

    server: str = ""


class _Readable:
    """The bus as one stream sees it: updates only from servers its principal may read."""

    def __init__(self, bus: SubscriptionBus, may_read: Callable[[str], bool]) -> None:
        self._bus = bus
        self._may_read = may_read

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        def heard(event: ServerEvent) -> None:
            if not isinstance(event, ServerUpdated) or self._may_read(event.server):
                listener(event)

        return self._bus.subscribe(heard)


def listen_handler(
    bus: SubscriptionBus, peers: Peers, passthrough: Passthrough, principal_of: PrincipalOf
) -> Listen:
    """The SDK's listen handler, admitted per server and subscribing the downstreams to the URIs each
    stream names."""
    open_streams = 0

    async def listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        nonlocal open_streams
        if open_streams >= MAX_STREAMS:
            raise MCPError(INTERNAL_ERROR, "Subscription limit reached")
        principal = principal_of(ctx)
        uris = list(params.notifications.resource_subscriptions or ())
        await passthrough.admit_listen(uris, principal)
        holder = f"listen {ctx.request_id} {Peers.key(ctx)}"
        held: list[str] = []
        # One handler per stream, over the bus as its principal may hear it.
        inner = ListenHandler(_Readable(bus, lambda server: passthrough.readable(principal, server)))
        open_streams += 1
        try:
            for uri in uris:
                if peers.hold(holder, uri):
                    try:
                        await passthrough.subscribe(uri)
                    except MCPError as exc:
                        # As with a subscription to a URI nobody serves: honored, never fires.
                        log.info("listen: could not subscribe to %s: %s", uri, exc.error.message)
                        peers.release(holder, uri)
                        continue
                held.append(uri)
            return await inner(ctx, params)
        finally:
            open_streams -= 1
            # The stream ends by cancellation (the client went away): unsubscribe regardless.
            with anyio.CancelScope(shield=True), anyio.move_on_after(UNSUBSCRIBE_WITHIN_S):
                for uri in held:
                    if peers.release(holder, uri):
                        await _unsubscribe(passthrough, uri)

    return listen


async def _unsubscribe(passthrough: Passthrough, uri: str) -> None:
    try:
        await passthrough.unsubscribe(uri)
    except MCPError as exc:
        log.info("listen: could not unsubscribe from %s: %s", uri, exc.error.message)


class Readers:
    """The principal each handshake-era connection subscribed as (bounded, as `Peers` is), so that
    an update reaches only the connections whose principal may read the server that sent it."""

    LIMIT = Peers.LIMIT * 4

    def __init__(self) -> None:
        self._principals: OrderedDict[str, Who] = OrderedDict()

    def remember(self, key: str, principal: Who) -> None:
        self._principals[key] = principal
        self._principals.move_to_end(key)
        while len(self._principals) > self.LIMIT:
            self._principals.popitem(last=False)

    def delivering(self, peers: Peers, passthrough: Passthrough) -> Notified:
        """`peers.downstream_notified`, with each resource update sent only to the subscribers whose
        principal may read its server (a connection not known here is `local`'s)."""

        async def notified(server: str, notification: types.ServerNotification) -> None:
            if not isinstance(notification, types.ResourceUpdatedNotification):
                await peers.downstream_notified(server, notification)
                return
            may = {
                key
                for key in peers.holders(notification.params.uri)
                if passthrough.readable(self._principals.get(key, LOCAL), server)
            }
            await peers.notify(notification, may)

        return notified


def publishing(bus: SubscriptionBus, notified: Notified) -> Notified:
    """`notified`, with each downstream resource update also published to the listen streams."""

    async def downstream_notified(server: str, notification: types.ServerNotification) -> None:
        if isinstance(notification, types.ResourceUpdatedNotification):
            await bus.publish(ServerUpdated(uri=notification.params.uri, server=server))
        await notified(server, notification)

    return downstream_notified
