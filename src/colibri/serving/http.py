"""The HTTP runner: an ASGI app (the SDK's Streamable HTTP app) under uvicorn, on HOST:PORT.

The HTTP stack is chosen here and nowhere else: uvicorn's httptools protocol on a uvloop event
loop (`STACK`). A program that serves HTTP runs its main through `run_program`, which starts the
loop the stack wants; `web_server` gives uvicorn the stack's protocol. bench_http.py measured it
against uvicorn's h11 protocol on asyncio (before) and granian: the least server CPU per call.

A stop signal ends the server loop (signals.py); `run_http` then returns and the program
closes what it owns. The socket is bound first (listen.py), so a bad address is one line. The
checks in front of every route are `guards.guarded`; DNS-rebinding protection follows the host
(hosts.py); slow sockets and open connections are bounded by `HttpLimits` (http_limits.py).
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, TypeVarTuple, Unpack

import anyio
from mcp.server.transport_security import TransportSecuritySettings

from colibri.serving.hosts import LOOPBACK_NAMES as LOOPBACK
from colibri.serving.hosts import WILDCARD, AllowedHosts, bracketed, is_loopback
from colibri.serving.http_limits import HttpLimits, timed_protocol
from colibri.serving.listen import listen
from colibri.serving.signals import DRAIN_GRACE_S, on_stop_signal

__all__ = [
    "LOOPBACK",
    "STACK",
    "WILDCARD",
    "base_url",
    "is_loopback",
    "run_http",
    "run_program",
    "security_for",
    "web_server",
]

T = TypeVar("T")
Args = TypeVarTuple("Args")

# "h11" is uvicorn's pure-Python protocol on asyncio's loop, what served before SPEC §25; the bench
# sets it in the server it measures to show what the switch saved.
STACK: Literal["httptools", "h11"] = "httptools"


def run_program(main: Callable[[Unpack[Args]], Awaitable[T]], *args: *Args) -> T:
    """`anyio.run(main, *args)` on the event loop of the HTTP stack (uvloop for httptools)."""
    return anyio.run(main, *args, backend_options={"use_uvloop": STACK == "httptools"})


def _protocol() -> Any:
    """uvicorn's HTTP/1.1 protocol class of the stack, imported only by a program that serves."""
    if STACK == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    return HttpToolsProtocol


def base_url(host: str, port: int) -> str:
    """http://HOST:PORT as a client would write it; a wildcard bind is named by this machine."""
    name = socket.gethostname() if host in WILDCARD else host
    return f"http://{bracketed(name)}:{port}"


async def run_http(
    app: Any,
    host: str,
    port: int,
    limits: HttpLimits | None = None,
    *,
    listener: socket.socket | None = None,
) -> None:
    """Serve `app` until SIGTERM or SIGINT, then return once the server has shut down.

    `listener` is a socket `listen(host, port)` bound already, so that a program reports a bad
    address (`AddressError`) before it starts anything or says it is serving; without one the
    socket is bound here, raising the same error before anything is served."""
    sock = listener or listen(host, port)
    web = web_server(app, host, port, limits or HttpLimits())

    async def stop() -> None:
        web.should_exit = True

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: on_stop_signal(stop))
            await web.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
    finally:
        sock.close()  # uvicorn closes it on a normal shutdown, not when cancelled


def security_for(host: str, extra_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection in the SDK's terms, always on: the Host (and any Origin) must
    name this server (`hosts.AllowedHosts.for_bind`). The `guards` check the same list on every
    route; this keeps the SDK's own check at `/mcp` in agreement with them."""
    return AllowedHosts.for_bind(host, extra_hosts).transport_security()


def web_server(app: Any, host: str, port: int, limits: HttpLimits) -> Any:
    """uvicorn serving `app`, bounded by `limits`, leaving the signals to the caller (`run_http` or
    a program that serves something else beside it)."""
    import uvicorn

    class Web(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Signals are ours (`on_stop_signal`): uvicorn would re-raise them after its
            # shutdown and kill the process before the program has closed what it owns.
            yield

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=timed_protocol(_protocol(), limits.header_timeout_s),
        limit_concurrency=limits.max_connections,
        # Requests in flight get this long to finish after a stop signal; open SSE streams
        # (a client's GET) would otherwise hold the shutdown forever.
        timeout_graceful_shutdown=int(DRAIN_GRACE_S),
    )
    return Web(config)
