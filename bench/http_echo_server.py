"""The HTTP baseline: the bare SDK echo server (echo_server.py's tool) as the SDK's own Streamable
HTTP app. No chain, no database, no authentication, nothing of Colibri imported. It answers each
POST with one JSON body, as `colibri serve --http` does (runtime/http.py), so that both pay the
same transport.

Usage: python bench/http_echo_server.py PORT [STACK]

STACK is the HTTP server under the app, the same names as Colibri's stacks in bench_http.py:
`h11` (uvicorn's h11 protocol on asyncio), `httptools` (uvicorn's httptools protocol on uvloop,
the default) or `granian` (granian's Rust HTTP/1 server, embedded in a uvloop loop).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.echo_server import build

STACKS = ("h11", "httptools", "granian")


def serve(app: Any, port: int, stack: str) -> None:
    if stack == "granian":
        import uvloop

        uvloop.run(_granian(app, port))
        return
    import uvicorn

    loop = "asyncio" if stack == "h11" else "uvloop"
    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, http=stack, loop=loop
    )


async def _granian(app: Any, port: int) -> None:
    import signal

    from granian.constants import HTTPModes, Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        app, "127.0.0.1", port, interface=Interfaces.ASGI, http=HTTPModes.http1, log_level=LogLevels.error
    )
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, server.stop)
    await server.serve()


if __name__ == "__main__":
    chosen = sys.argv[2] if len(sys.argv) > 2 else "httptools"
    if chosen not in STACKS:
        raise SystemExit(f"unknown stack {chosen!r}; use one of {', '.join(STACKS)}")
    web = build().streamable_http_app(host="127.0.0.1", json_response=True)
    serve(web, int(sys.argv[1]), chosen)
