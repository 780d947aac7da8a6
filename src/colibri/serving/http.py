"""The HTTP runner: an ASGI app (the SDK's Streamable HTTP app) under uvicorn, on HOST:PORT.

A stop signal ends the server loop (signals.py); `run_http` then returns and the program
closes what it owns. DNS-rebinding protection follows the host (`security_for`); slow sockets
and open connections are bounded by `HttpLimits` (http_limits.py).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings

from colibri.serving.http_limits import HttpLimits, timed_protocol
from colibri.serving.signals import DRAIN_GRACE_S, on_stop_signal

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def base_url(host: str, port: int) -> str:
    """http://HOST:PORT as a client would write it; a wildcard bind is named by this machine."""
    name = socket.gethostname() if host in WILDCARD else host
    return f"http://{_bracketed(name)}:{port}"


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def run_http(app: Any, host: str, port: int, limits: HttpLimits | None = None) -> None:
    """Serve `app` until SIGTERM or SIGINT, then return once the server has shut down."""
    web = web_server(app, host, port, limits or HttpLimits())

    async def stop() -> None:
        web.should_exit = True

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: on_stop_signal(stop))
        await web.serve()
        tasks.cancel_scope.cancel()


def security_for(host: str, extra_hosts: Iterable[str] = ()) -> TransportSecuritySettings | None:
    """DNS-rebinding protection, always on: the Host (and any Origin) must name this server.

    Loopback with nothing extra: the SDK's own settings. A wildcard bind (0.0.0.0, ::) accepts
    the loopback names and this machine's hostname; `extra_hosts` adds the names (DNS names,
    addresses) clients use to reach it from elsewhere."""
    extra = list(extra_hosts)
    if host in LOOPBACK and not extra:
        return None
    if host in WILDCARD:
        names = [*LOOPBACK, socket.gethostname(), socket.getfqdn(), *extra]
    elif is_loopback(host):
        names = [*LOOPBACK, host, *extra]
    else:
        names = [host, *extra]
    shown = list(dict.fromkeys(_bracketed(name) for name in names if name))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in shown] + shown,
        allowed_origins=[f"{scheme}://{name}:*" for name in shown for scheme in ("http", "https")]
        + [f"{scheme}://{name}" for name in shown for scheme in ("http", "https")],
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
        # Requests in flight get this long to finish after a stop signal; open SSE streams
        # (a client's GET) would otherwise hold the shutdown forever.
        timeout_graceful_shutdown=int(DRAIN_GRACE_S),
    )
    return Web(config)
