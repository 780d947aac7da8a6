"""`colibri serve --http`: the app behind the SDK's Streamable HTTP app, with tokens and probes.

Phase 1 is the HTTP server itself; phase 2 runs beside it (`App.boot`). `/healthz` says the
process is up; `/readyz` is 200 only once phase 2 has opened the database in a mode that
serves tools, else 503 with the reason. On SIGTERM the runner stops accepting and lets the
requests in flight finish; then the database closes once the last call has left the chain.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from colibri import __version__
from colibri.chain.worker import in_worker
from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.runtime.app import App
from colibri.runtime.http_auth import DatabaseTokenVerifier, auth_settings
from colibri.runtime.server import build_server
from colibri.runtime.tiles import tile_routes
from colibri.serving.http import base_url, run_http, security_for

log = logging.getLogger("colibri")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    auth: bool = True
    allowed_hosts: Sequence[str] = ()
    public_url: str | None = None  # the base URL clients use, when not http://HOST:PORT
    # The human pages at / (`colibri.ui`, wired by the CLI: it sits beside the runtime, not below).
    pages: Callable[[AppReader], Sequence[Route]] | None = None


class AppReader:
    """The pages' way to the server's own database: under the chain's lock, in the chain's worker
    thread, like a tool call, so a page never shares the connection with a handler at the same time."""

    def __init__(self, app: App) -> None:
        self._app = app

    async def read(self, work: Callable[[Database], T]) -> T:
        async with self._app.chain.lock:
            db = self._app.state.db
            if db is None:
                raise StorageError(f"the database is not open yet ({self._app.readiness() or 'booting'})")
            return await in_worker(work, db)


def probe_routes(app: App) -> list[Route]:
    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "up", "version": __version__})

    async def readyz(request: Request) -> JSONResponse:
        reason = app.readiness()
        if reason is None:
            return JSONResponse({"status": "ready", "mode": app.state.mode.value})
        return JSONResponse({"status": "not ready", "reason": reason}, status_code=503)

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]


async def serve_http(app: App, options: HttpOptions) -> None:
    """Serve until SIGTERM or SIGINT; returns with the database closed."""
    server = build_server(app)
    url = (options.public_url or base_url(options.host, options.port)).rstrip("/")
    web = server.streamable_http_app(
        host=options.host,
        transport_security=security_for(options.host, options.allowed_hosts),
        auth=auth_settings(url) if options.auth else None,
        token_verifier=DatabaseTokenVerifier(app) if options.auth else None,
        custom_starlette_routes=[
            *probe_routes(app),
            *tile_routes(AppReader(app), require_token=options.auth),
            *(options.pages(AppReader(app)) if options.pages else ()),
        ],
    )
    log.info(
        "colibri %s serving Streamable HTTP at %s/mcp (%s); mode %s",
        __version__,
        url,
        "bearer tokens required" if options.auth else "NO authentication, loopback only",
        app.config.mode,
    )
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.boot)
        await run_http(web, options.host, options.port)
        tasks.cancel_scope.cancel()
    log.info("HTTP server stopped; closing the database once the last call has finished")
    async with app.chain.lock:
        app.close()
