"""The SDK edge: one open `mcp.Client` per downstream, and the one place its errors become ours.

`open_session` is the default `Connector`: it starts a stdio server (`pipes.ProcessTransport`) or
opens a Streamable HTTP connection (the SDK's client transport), negotiates the protocol era with
`mode="auto"`, and yields a `DownstreamSession`. The transport's read stream is watched, so a process
that dies is known the moment its stdout closes, not at the next call or check.
"""

from __future__ import annotations

import importlib
import logging
import math
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import CONNECTION_CLOSED, INVALID_REQUEST, REQUEST_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colibri.pipes import WRITE_FAILED, ProcessTransport, ReceiveIteration
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.errors import (
    CallTimedOut,
    ConnectFailed,
    ConnectionLost,
    MalformedResult,
    NotSent,
    PeerError,
)

log = logging.getLogger("colibri.switchboard")

# The SDK imports these on the first result whose structured content it checks against an output
# schema; importing them with the switchboard keeps that cost off the first routed call.
importlib.import_module("jsonschema")
importlib.import_module("referencing")

LIST_PAGE_CAP = 100
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
# The SDK's own defaults for its HTTP client: a long read timeout, as a server may hold a stream open.
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
# httpx errors raised before any byte of the request left: the server cannot have acted on it.
UNSENT_HTTP_ERRORS = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)


@dataclass(slots=True)
class _Attempt:
    """One request in flight; the HTTP transport marks it when the request could not be sent."""

    unsent: bool = False


# The SDK runs each HTTP request in a copy of the sender's context, so the mark lands on the
# sender's own `_Attempt` (a refused connection otherwise looks like one lost mid-call).
_ATTEMPT: ContextVar[_Attempt | None] = ContextVar("colibri_switchboard_attempt", default=None)


ResultT = TypeVar("ResultT", bound=types.Result)
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class Relay(Protocol):
    """Where a downstream's own requests (sampling, elicitation, roots) are answered: a client."""

    async def __call__(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT: ...


class Caller(Protocol):
    """The client request a downstream call serves: its progress, logs and the downstream's requests."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None: ...

    async def log(self, params: types.LoggingMessageNotificationParams) -> None: ...

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT: ...


async def _no_news(notification: types.ServerNotification) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the connection tells its owner: it closed, a list changed, a notification or a request came."""

    closed: Callable[[str], None]
    tools_changed: Callable[[], None]
    lists_changed: Callable[[], None] = lambda: None
    notified: Callable[[types.ServerNotification], Awaitable[None]] = _no_news
    relay: Relay | None = None


class DownstreamSession(Protocol):
    """An open connection to one downstream, as the switchboard uses it."""

    @property
    def server_name(self) -> str | None: ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def is_closed(self) -> bool: ...

    async def wait_closed(self) -> None: ...

    async def ping(self, timeout: float) -> None: ...

    async def list_tools(self, timeout: float) -> list[types.Tool]: ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None = None
    ) -> types.CallToolResult: ...

    @property
    def capabilities(self) -> types.ServerCapabilities: ...

    async def request(
        self, request: types.ClientRequest, result_type: type[ResultT], timeout: float
    ) -> ResultT: ...


Connector = Callable[[ServerSpec, Hooks, float], AbstractAsyncContextManager[DownstreamSession]]


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


def _client_callbacks(hooks: Hooks) -> dict[str, Any]:
    """The SDK client's callbacks, each handing what the downstream sent to `hooks`."""

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            hooks.tools_changed()
        elif isinstance(message, types.ResourceListChangedNotification | types.PromptListChangedNotification):
            hooks.lists_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            await hooks.notified(message)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        await hooks.notified(types.LoggingMessageNotification(params=params))

    async def relayed(request: types.ServerRequest, result_type: type[ResultT]) -> ResultT | types.ErrorData:
        if hooks.relay is None:
            return types.ErrorData(code=INVALID_REQUEST, message="no client is connected to answer it")
        try:
            return await hooks.relay(request, result_type)
        except MCPError as exc:
            return exc.error

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await relayed(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await relayed(types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return await relayed(types.ListRootsRequest(), types.ListRootsResult)

    return {
        "message_handler": on_message,
        "logging_callback": on_log,
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "list_roots_callback": roots,
    }


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

    transport = _WatchedTransport(spec, on_eof)
    client = Client(transport, mode=mode, cache=None, **_client_callbacks(hooks))
    with anyio.CancelScope(deadline=anyio.current_time() + connect_timeout) as scope:
        try:
            async with client:
                connected = True
                scope.deadline = math.inf
                if early:
                    on_eof(early[0])
                yield SdkSession(client, closed)
        except Exception as exc:
            if not connected and mode == "legacy" and isinstance(next(_leaves(exc), exc), MCPError):
                raise _NoHandshake from exc
            if not connected:
                raise ConnectFailed(_describe_connect_error(spec, exc)) from exc
            # The transport's own tasks failed (an HTTP server that went away, say).
            log.debug("%s: transport failed", spec.name, exc_info=True)
            raise ConnectionLost(f"the transport failed: {_describe_failure(exc)}") from exc
    if not connected:
        raise ConnectFailed(f"no handshake within {connect_timeout:g} s")


class SdkSession:
    """`DownstreamSession` over an entered `mcp.Client`."""

    def __init__(self, client: Client, closed: anyio.Event) -> None:
        self._client = client
        self._closed = closed

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
        forwards = _Forwards()
        with self._converted(timeout) as deadline:

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                # Slow is not down: news of progress pushes the deadline out by another timeout.
                deadline.deadline = anyio.current_time() + timeout
                if on_progress is not None:
                    with forwards:
                        await on_progress(progress, total, message)

            result = await self._client.session.call_tool(name, arguments, progress_callback=progressed)
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

    @contextmanager
    def _converted(self, timeout: float) -> Iterator[anyio.CancelScope]:
        """Run one request under `timeout`, turning SDK and transport errors into ours."""
        if self._closed.is_set():
            raise NotSent("the connection is closed")
        unwritten = WRITE_FAILED.set(False)
        attempt = _Attempt()
        current = _ATTEMPT.set(attempt)
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
            raise MalformedResult(f"the answer is not a valid result: {_first_line(str(exc))}") from exc
        except RuntimeError as exc:
            # The SDK raises RuntimeError when structured content breaks the tool's output schema.
            raise MalformedResult(_first_line(str(exc))) from exc
        finally:
            _ATTEMPT.reset(current)
            WRITE_FAILED.reset(unwritten)


class _Forwards:
    """Progress notifications being passed on to the client."""

    SETTLE_S = 1.0

    def __init__(self) -> None:
        self._open = 0
        self._idle = anyio.Event()

    def __enter__(self) -> None:
        self._open += 1

    def __exit__(self, *exc: object) -> None:
        self._open -= 1
        if self._open == 0:
            self._idle.set()
            self._idle = anyio.Event()

    async def settled(self) -> None:
        await anyio.lowlevel.checkpoint()  # forwards already scheduled start before this returns
        with anyio.move_on_after(self.SETTLE_S):
            while self._open:
                await self._idle.wait()


class _WatchedTransport:
    """The SDK transport for `spec`, with a read stream that reports its own end."""

    def __init__(self, spec: ServerSpec, on_eof: Callable[[str], None]) -> None:
        self._on_eof = on_eof
        if spec.url is not None and spec.sse:
            self._inner: AbstractAsyncContextManager[Any] = sse_client(spec.url, headers=dict(spec.headers))
            self._eof_reason = "the connection closed"
        elif spec.url is not None:
            self._inner = _http_streams(spec.url, dict(spec.headers))
            self._eof_reason = "the connection closed"
        else:
            assert spec.command is not None
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
            )
            self._inner = ProcessTransport(params)
            self._eof_reason = "the process exited (its stdout closed)"

    async def __aenter__(self) -> tuple[_WatchedReadStream, Any]:
        read_stream, write_stream = await self._inner.__aenter__()
        return _WatchedReadStream(read_stream, lambda: self._on_eof(self._eof_reason)), write_stream

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)


@asynccontextmanager
async def _http_streams(url: str, headers: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's Streamable HTTP transport over a client that notices requests that never left."""
    transport = _UnsentWatch(httpx2.AsyncHTTPTransport())
    async with (
        httpx2.AsyncClient(timeout=HTTP_TIMEOUT, transport=transport, headers=headers) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


class _UnsentWatch(httpx2.AsyncBaseTransport):
    """Marks the current `_Attempt` unsent when the connection fails before the request is sent."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except UNSENT_HTTP_ERRORS:
            attempt = _ATTEMPT.get()
            if attempt is not None:
                attempt.unsent = True
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedReadStream(ReceiveIteration):
    """Delegates to the transport's read stream and calls `on_end` once when it ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _describe_connect_error(spec: ServerSpec, error: BaseException) -> str:
    leaf = next(_leaves(error), error)
    if isinstance(leaf, OSError):
        return f"cannot start {spec.command or spec.url}: {leaf}"
    if isinstance(leaf, MCPError):
        return f"handshake failed: {leaf.error.message}"
    return f"connection failed: {_describe_failure(leaf)}"


def _describe_failure(error: BaseException) -> str:
    leaf = next(_leaves(error), error)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {_first_line(text)}" if text else type(leaf).__name__


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"
