"""The byte streams under a downstream's SDK client: a stdio process or an HTTP connection, watched.

The read stream reports its own end, so a process that dies is known the moment its stdout closes;
the HTTP client marks a request that never left (refused connection), so a call that cannot have
reached the server is told apart from one lost mid-call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx2
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from colibri.pipes import ProcessTransport
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream.coalesced import coalesced_transport
from colibri.switchboard.downstream.exchange import bearer_auth
from colibri.switchboard.downstream.http_lane import UNSENT_HTTP_ERRORS, HttpLane
from colibri.switchboard.downstream.lanes import DownstreamLane
from colibri.switchboard.downstream.owners import WireOwners
from colibri.switchboard.downstream.stderr import MaskedStderr
from colibri.switchboard.downstream.watched import Judge, WatchedReadStream

# The SDK's own defaults for its HTTP client: a long read timeout, as a server may hold a stream open.
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@dataclass(slots=True)
class Attempt:
    """One request in flight; the HTTP transport marks it when the request could not be sent."""

    unsent: bool = False


# The SDK runs each HTTP request in a copy of the sender's context, so the mark lands on the
# sender's own `Attempt` (a refused connection otherwise looks like one lost mid-call).
ATTEMPT: ContextVar[Attempt | None] = ContextVar("colibri_switchboard_attempt", default=None)


class WatchedTransport:
    """The SDK transport for `spec`, with a read stream that reports its own end.

    A stdio downstream also gets a lean lane (`lane`, see lanes.py) beside the SDK on its pipes,
    and, when its entry holds secrets, its stderr masked on the way to ours (stderr.py). A
    Streamable HTTP downstream gets one on the SDK's own HTTP client (http_lane.py).
    """

    def __init__(
        self, spec: ServerSpec, on_eof: Callable[[str], None], sole: Callable[[], Any] = lambda: None
    ) -> None:
        self._on_eof = on_eof
        self.lane: DownstreamLane | HttpLane | None = None
        self._stderr: MaskedStderr | None = None
        # How a call-bound message is tied to its call (owners.py). Streamable HTTP needs nothing:
        # what arrives on a request's own response stream is read in its sender's context.
        self._judge: Judge | None = None
        if spec.url is not None and spec.sse:
            self._inner: AbstractAsyncContextManager[Any] = sse_client(spec.url, headers=dict(spec.headers))
            self._eof_reason = "the connection closed"
            self._judge = lambda message: sole()  # one stream, all of it read by the SDK in order
        elif spec.url is not None:
            self.lane = lane = HttpLane(spec.url)
            self._inner = _http_streams(spec.url, dict(spec.headers), bearer_auth(spec), lane)
            self._eof_reason = "the connection closed"
        else:
            assert spec.command is not None
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
            )
            self._inner = ProcessTransport(params)
            if spec.hidden:
                self._params, self._stderr = params, MaskedStderr(spec.name, spec.hidden)
            self._eof_reason = "the process exited (its stdout closed)"
            self.lane = DownstreamLane(WireOwners(sole))
            self._judge = self.lane.judged.owner_of

    async def __aenter__(self) -> tuple[WatchedReadStream, Any]:
        if self._stderr is not None:
            self._inner = ProcessTransport(self._params, stderr=self._stderr.open())
            try:
                read_stream, write_stream = await self._inner.__aenter__()
            finally:
                self._stderr.spawned()
        else:
            read_stream, write_stream = await self._inner.__aenter__()
        watched = WatchedReadStream(read_stream, self._ended, self._judge)
        if isinstance(self.lane, DownstreamLane):
            self.lane.attach(write_stream)
            read_stream.divert = self.lane
        elif self.lane is not None:
            self.lane.inject = watched.inject  # what a lean call's stream carries besides its answer
            self.lane.on_refused = self._refused
        return watched, write_stream

    def _refused(self, reason: str) -> None:
        # A lean call's POST was refused: the connection is over, as the SDK's transport ends it.
        self._eof_reason = reason
        self._ended()

    def _ended(self) -> None:
        if self.lane is not None:
            self.lane.close(self._eof_reason)
        self._on_eof(self._eof_reason)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return await self._inner.__aexit__(exc_type, exc, tb)
        finally:
            if self.lane is not None:
                # Closed by us (a reload, a reconnect, the end) the stream may never see its end:
                # the lean calls still in flight must hear now that no answer will come, not at
                # their timeout. Answers written before the process stopped were taken already.
                self.lane.close("the connection was closed")


@asynccontextmanager
async def _http_streams(
    url: str, headers: dict[str, str], auth: httpx2.Auth | None, lane: HttpLane
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's Streamable HTTP transport over a client that notices requests that never left (and,
    for an exchange server, sends each request's token: exchange.py), shared with the lean lane."""
    transport = _UnsentWatch(coalesced_transport(), lane)  # each request sent in one write (coalesced.py)
    async with (
        httpx2.AsyncClient(timeout=HTTP_TIMEOUT, transport=transport, headers=headers, auth=auth) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        lane.attach(client)
        yield streams


class _UnsentWatch(httpx2.AsyncBaseTransport):
    """Marks the current `Attempt` unsent when the connection fails before the request is sent, and
    shows the lane the session each request goes in."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, lane: HttpLane) -> None:
        self._inner = inner
        self._lane = lane

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._lane.seen(request)
        try:
            response = await self._inner.handle_async_request(request)
        except UNSENT_HTTP_ERRORS:
            attempt = ATTEMPT.get()
            if attempt is not None:
                attempt.unsent = True
            raise
        self._lane.seen(response)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
