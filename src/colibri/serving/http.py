"""The HTTP runner: an ASGI app (the SDK's Streamable HTTP app) under uvicorn, on HOST:PORT.

A stop signal ends the server loop (signals.py); `run_http` then returns and the program
closes what it owns. DNS-rebinding protection follows the host (`security_for`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings

from colibri.serving.signals import on_stop_signal

LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def run_http(app: Any, host: str, port: int) -> None:
    """Serve `app` until SIGTERM or SIGINT, then return once the server has shut down."""
    web = _web_server(app, host, port)

    async def stop() -> None:
        web.should_exit = True

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: on_stop_signal(stop))
        await web.serve()
        tasks.cancel_scope.cancel()


def security_for(host: str) -> TransportSecuritySettings | None:
    """Loopback: the SDK's own DNS-rebinding settings. Elsewhere: protection on, for that host."""
    if host in LOOPBACK:
        return None
    shown = f"[{host}]" if ":" in host else host
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{shown}:*"],
        allowed_origins=[f"http://{shown}:*", f"https://{shown}:*"],
    )


def _web_server(app: Any, host: str, port: int) -> Any:
    import uvicorn

    class Web(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Signals are ours (`on_stop_signal`): uvicorn would re-raise them after its
            # shutdown and kill the process before the program has closed what it owns.
            yield

    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False, lifespan="on")
    return Web(config)
