"""The SDK edge: one open `mcp.Client` per downstream, and the one place its errors become ours.

`open_session` is the default `Connector`: it starts a stdio server or opens an HTTP connection
(`streams.py`), negotiates the protocol era (the handshake era first) and yields a `DownstreamSession`
(base/contracts.py) whose errors are already the switchboard's own.
"""

from __future__ import annotations

import asyncio
import logging
import math
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any, Literal, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colibri.pipes import WRITE_FAILED
from colibri.switchboard.base import (
    Abandon,
    CallTimedOut,
    ConnectFailed,
    ConnectionLost,
    Done,
    Hooks,
    MalformedResult,
    Notify,
    NotSent,
    PeerError,
    Progress,
    ResultT,
    describe_connect_error,
    describe_failure,
    first_line,
    hide,
    leaves,
)
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream.asking import asks_for_input, unless_asked
from colibri.switchboard.downstream.callbacks import client_callbacks
from colibri.switchboard.downstream.forwards import Forwards
from colibri.switchboard.downstream.http_lane import HttpLane
from colibri.switchboard.downstream.lane_calls import Stamp
from colibri.switchboard.downstream.lanes import DownstreamLane
from colibri.switchboard.downstream.results import SERVER_INFO_META, parsed, without_server_info
from colibri.switchboard.downstream.statement import SENT_META
from colibri.switchboard.downstream.streams import ATTEMPT, Attempt, WatchedTransport

log = logging.getLogger("colibri.switchboard")

LIST_PAGE_CAP = 100


class _NoHandshake(Exception):
    """The server answered the initialize handshake with an error: it speaks only the 2026 era."""


@asynccontextmanager
async def open_session(spec: ServerSpec, hooks: Hooks, connect_timeout: float) -> AsyncIterator[SdkSession]:
    """Connect to `spec` (handshake bounded by `connect_timeout`) and keep the connection open.

    The handshake era first: measured here, a routed call costs a third less over it than over the
    2026 era (smaller messages, less to validate on each side), and it is the era in which a
    downstream's sampling, elicitation and roots requests can be relayed to the client. A server
    that refuses the handshake is connected again in the 2026 era.
    """
    try:
        async with _connect(spec, hooks, connect_timeout, "legacy") as session:
            yield session
            return
    except _NoHandshake:
        log.info("%s: no initialize handshake; connecting in the 2026 era", spec.name)
    async with _connect(spec, hooks, connect_timeout, "auto") as session:
        yield session


@asynccontextmanager
async def _connect(
    spec: ServerSpec, hooks: Hooks, connect_timeout: float, mode: Literal["legacy", "auto"]
) -> AsyncIterator[SdkSession]:
    closed = anyio.Event()
    connected = False
    early: list[str] = []

    def on_eof(reason: str) -> None:
        # Before the handshake completes, the end is the handshake's failure (or a retry's cue).
        if not connected:
            early.append(reason)
        elif not closed.is_set():
            closed.set()
            hooks.closed(reason)

    transport = WatchedTransport(spec, on_eof, hooks.sole)
    client = Client(transport, mode=mode, cache=None, **client_callbacks(hooks, spec.name))
    with anyio.CancelScope(deadline=anyio.current_time() + connect_timeout) as scope:
        try:
            async with client:
                connected = True
                scope.deadline = math.inf
                if early:
                    on_eof(early[0])
                yield SdkSession(client, closed, transport.lane)
        except Exception as exc:
            if not connected and scope.cancel_called:
                # Our deadline, whatever the SDK made of the cancellation: never a cue to retry.
                raise ConnectFailed(f"no handshake within {connect_timeout:g} s") from exc
            if not connected and mode == "legacy" and isinstance(next(leaves(exc), exc), MCPError):
                raise _NoHandshake from exc
            if not connected:
                raise ConnectFailed(hide(describe_connect_error(exc), spec.hidden)) from exc
            # The transport's own tasks failed (an HTTP server that went away, say).
            log.debug("%s: transport failed: %s", spec.name, hide(describe_failure(exc), spec.hidden))
            raise ConnectionLost(f"the transport failed: {hide(describe_failure(exc), spec.hidden)}") from exc
    if not connected:
        raise ConnectFailed(f"no handshake within {connect_timeout:g} s")


class SdkSession:
    """`DownstreamSession` over an entered `mcp.Client`."""

    def __init__(
        self, client: Client, closed: anyio.Event, lane: DownstreamLane | HttpLane | None = None
    ) -> None:
        self._client = client
        self._closed = closed
        self._lane = lane
        self._driving: set[asyncio.Task[None]] = set()

    @property
    def server_name(self) -> str | None:
        info = self._client.server_info
        return None if info is None else info.name

    @property
    def protocol_version(self) -> str:
        return self._client.protocol_version

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def ping(self, timeout: float) -> None:
        """An MCP ping; `server/discover` on the 2026 era, which has no ping."""
        session = self._client.session
        with self._converted(timeout):
            if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await session.send_discover(self.protocol_version)
            else:
                await session.send_ping()

    async def list_tools(self, timeout: float) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        with self._converted(timeout):
            for _ in range(LIST_PAGE_CAP):
                page = await self._client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        return tools

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return self._client.server_capabilities

    async def request(
        self, request: types.ClientRequest, result_type: type[ResultT], timeout: float
    ) -> ResultT:
        """Any other request (resources, prompts, completion, logging), answered as `result_type`."""
        with self._converted(timeout), warnings.catch_warnings():
            # logging/setLevel is deprecated in the 2026 era; handshake-era servers still take it.
            warnings.simplefilter("ignore", DeprecationWarning)
            return await self._client.session.send_request(request, result_type)

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None = None
    ) -> types.CallToolResult:
        forwards = Forwards()
        with self._converted(timeout) as deadline:

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                # Slow is not down: news of progress pushes the deadline out by another timeout.
                deadline.deadline = anyio.current_time() + timeout
                if on_progress is not None:
                    with forwards:
                        await on_progress(progress, total, message)

            # The Client (not its session): a 2026-era server's input requests are answered through
            # the callbacks, which relay them to the client whose call this is (callbacks.py).
            told = cast("types.RequestParamsMeta | None", SENT_META.get())  # a Colibri's (statement.py)
            result = await self._client.call_tool(name, arguments, progress_callback=progressed, meta=told)
        # The SDK hands each progress notification to a task of its own, so the last one can still
        # be on its way when the result is here: let it reach the client first, as it was sent.
        await forwards.settled()
        if not isinstance(result, types.CallToolResult):
            raise MalformedResult(f"expected a tools/call result, got {type(result).__name__}")
        if result.meta and SERVER_INFO_META in result.meta:
            # The 2026 era stamps the answering server's identity; the switchboard stamps its own.
            meta = {key: value for key, value in result.meta.items() if key != SERVER_INFO_META}
            result = result.model_copy(update={"meta": meta or None})
        return result

    async def call_raw(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None = None
    ) -> dict[str, Any]:
        """`call_tool`, answered as the raw JSON `result` object; over the lean lane when there is one."""
        stamp = self._stamp()
        if self._lane is None or stamp is None:
            result = await self.call_tool(name, arguments, timeout, on_progress)
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if self._closed.is_set():
            raise NotSent("the connection is closed")
        raw = await self._lane.call(name, arguments, timeout, on_progress, stamp)
        if asks_for_input(raw):
            return await self._driven(name, arguments, timeout, on_progress)
        result = parsed(raw)
        if not result.is_error:
            try:
                await self._client.session.validate_tool_result(name, result)
            except RuntimeError as exc:
                raise MalformedResult(first_line(str(exc))) from exc
        return without_server_info(raw)

    def send_raw(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Notify, done: Done
    ) -> Abandon | None:
        stamp = self._stamp()
        if self._lane is None or stamp is None:
            return None
        if self._closed.is_set():
            raise NotSent("the connection is closed")
        drive = partial(self._driven, name, arguments, timeout, None)
        finished = unless_asked(done, drive, self._driving)
        key = self._lane.send(name, arguments, timeout, on_progress, stamp, done=finished)
        return partial(self._lane.abandon, key)

    async def _driven(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None
    ) -> dict[str, Any]:
        # A 2026-era server asked for input instead of answering the lean request (it is stateless,
        # so nothing was done): the call is made again through the SDK's client, which answers them.
        result = await self.call_tool(name, arguments, timeout, on_progress)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _stamp(self) -> Stamp | None:
        # The SDK's per-request stamp (protocol era, client info and capabilities in `_meta` on the
        # 2026 era) keeps a lean request what the SDK itself would have sent.
        stamp = getattr(self._client.session, "_stamp", None)
        return stamp if callable(stamp) else None

    @contextmanager
    def _converted(self, timeout: float) -> Iterator[anyio.CancelScope]:
        """Run one request under `timeout`, turning SDK and transport errors into ours."""
        if self._closed.is_set():
            raise NotSent("the connection is closed")
        unwritten = WRITE_FAILED.set(False)
        attempt = Attempt()
        current = ATTEMPT.set(attempt)
        try:
            with anyio.fail_after(timeout) as scope:
                yield scope
        except TimeoutError:
            raise CallTimedOut(f"no answer within {timeout:g} s") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED and attempt.unsent:
                raise NotSent("the connection was refused before the request could be sent") from exc
            if exc.code == CONNECTION_CLOSED and WRITE_FAILED.get():
                raise NotSent("the connection closed before the request could be written") from exc
            if exc.code == CONNECTION_CLOSED:
                raise ConnectionLost("the connection closed before the answer came") from exc
            if exc.code == REQUEST_TIMEOUT:
                raise CallTimedOut(exc.error.message) from exc
            raise PeerError(exc.code, exc.error.message, exc.error.data) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ConnectionLost("the connection broke while sending") from exc
        except ValidationError as exc:
            raise MalformedResult(f"the answer is not a valid result: {first_line(str(exc))}") from exc
        except RuntimeError as exc:
            # The SDK raises RuntimeError when structured content breaks the tool's output schema.
            raise MalformedResult(first_line(str(exc))) from exc
        finally:
            ATTEMPT.reset(current)
            WRITE_FAILED.reset(unwritten)
