"""Resource updates for 2026-era clients: `subscriptions/listen` streams, backed by downstream subscriptions.

The 2026 era has no resources/subscribe: a client names the URIs it wants in the filter of a
`subscriptions/listen` stream. The SDK's `ListenHandler` delivers the `ResourceUpdated` events
published on the bus to the streams that named their URI; this module makes those events exist
behind a gateway: while a stream names a URI, the server that owns it is subscribed (shared with
handshake-era subscribers through `Peers`, so each downstream is asked once), and every update a
downstream sends is published on the bus as well as sent to the handshake-era subscribers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus
from mcp.shared.exceptions import MCPError

from colibri.switchboard.base import Notified
from colibri.switchboard.faces.peers import Peers
from colibri.switchboard.routing import Passthrough

log = logging.getLogger("colibri.switchboard")

UNSUBSCRIBE_WITHIN_S = 5.0

Listen = Callable[[ServerRequestContext[Any, Any], types.SubscriptionsListenRequestParams], Awaitable[Any]]


def listen_handler(bus: SubscriptionBus, peers: Peers, passthrough: Passthrough) -> Listen:
    """The SDK's listen handler, subscribing the downstreams to the URIs each stream names."""
    inner = ListenHandler(bus)

    async def listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        holder = f"listen {ctx.request_id} {Peers.key(ctx)}"
        held: list[str] = []
        try:
            for uri in params.notifications.resource_subscriptions or ():
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


def publishing(bus: SubscriptionBus, notified: Notified) -> Notified:
    """`notified`, with each downstream resource update also published to the listen streams."""

    async def downstream_notified(server: str, notification: types.ServerNotification) -> None:
        if isinstance(notification, types.ResourceUpdatedNotification):
            await bus.publish(ResourceUpdated(uri=notification.params.uri))
        await notified(server, notification)

    return downstream_notified
