"""`colibri` on a chosen HTTP stack, for bench_http.py's comparison: `python bench/colibri_on_stack.py
STACK ARGS...` runs `colibri ARGS...` with `STACK` one of http_echo_server.py's stacks.

`h11` and `httptools` are the two values of `colibri.serving.http.STACK` (the product's one choice);
`granian` replaces the runner, `serving.http.run_http`, by granian's embedded server on the same
uvloop loop (the header timeout given to granian's own; the guards and the app unchanged), so that
the stack is the only difference measured.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio

from colibri.serving import http
from colibri.serving.http_limits import HttpLimits
from colibri.serving.signals import on_stop_signal


async def granian_run_http(
    app: Any, host: str, port: int, limits: HttpLimits | None = None, *, listener: socket.socket | None = None
) -> None:
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server.embed import Server

    if listener is not None:
        listener.close()  # granian binds its own socket
    timeout_ms = int((limits or HttpLimits()).header_timeout_s * 1000)
    server = Server(
        app,
        host,
        port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(header_read_timeout=timeout_ms),
        log_level=LogLevels.error,
    )

    async def stop() -> None:
        server.stop()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: on_stop_signal(stop))
        await server.serve()
        tasks.cancel_scope.cancel()


if __name__ == "__main__":
    stack = sys.argv.pop(1)
    if stack == "granian":
        http.run_http = granian_run_http  # before runtime/http.py imports it
    else:
        http.STACK = stack  # type: ignore[assignment]
    from colibri.cli import main

    raise SystemExit(main(sys.argv[1:]))
