"""What the HTTP face's lean lane (post_lane.py) reads of a request and keeps of its session."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.types import Message, Receive, Scope

from colibri.switchboard.base import jsonlines
from colibri.switchboard.faces.outbox import Outbox


@contextmanager
def held_open(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """The session counts the call as a request in flight, as the SDK's transport counts its own:
    its idle countdown is suspended meanwhile and restarts when the last request ends."""
    idle, timeout = transport.idle_scope, transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


def replayed(messages: list[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def message_of(body: bytes) -> dict[str, Any] | None:
    try:
        message = jsonlines.loads(body)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None


def disconnected(outbox: Outbox, watching: asyncio.Future[Message]) -> None:
    if (
        not watching.cancelled()
        and watching.exception() is None
        and watching.result()["type"] == "http.disconnect"
    ):
        outbox.gone()
