"""The HTTP runner: an ASGI app (the SDK's Streamable HTTP app) under uvicorn, on HOST:PORT.

A stop signal ends the server loop (signals.py); `run_http` then returns and the program
closes what it owns. DNS-rebinding protection follows the host (`security_for`); slow sockets
and open connections are bounded by `HttpLimits` (http_limits.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings

from colibri.serving.http_limits import HttpLimits, allowed_hosts, timed_protocol
from colibri.serving.signals import on_stop_signal

LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def run_http(app: Any, host: str, port: int, limits: HttpLimits | None = None) -> None:
    """Serve `app` until SIGTERM or SIGINT, then return once the server has shut down."""
    web = web_server(app, host, port, limits or HttpLimits())

    async def stop() -> None:
        web.should_exit = True

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: on_stop_signal(stop))
        await web.serve()
        tasks.cancel_scope.cancel()


def security_for(host: str) -> TransportSecuritySettings | None:
    """Loopback: the SDK's own DNS-rebinding settings. Elsewhere: protection on, for that host
    (for a wildcard bind: the loopback names and this machine's names, see http_limits.py)."""
    if host in LOOPBACK:
        return None
    hosts = allowed_hosts(host)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{name}" for name in hosts for scheme in ("http", "https")],
    )


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
        http=timed_protocol(limits.header_timeout_s),
        limit_concurrency=limits.max_connections,
    )
    return Web(config)
