"""`colibri serve --http`: the app behind the SDK's Streamable HTTP app, with tokens and probes.

Phase 1 is the HTTP server itself; phase 2 runs beside it (`App.boot`). `/healthz` says the
process is up; `/readyz` is 200 only once phase 2 has opened the database in a mode that
serves tools, else 503 with the reason (a boot failure's details only to a loopback client:
they may name the database's user, host and port). Every route is behind the shared checks
(`serving.guards`) and MCP sessions are capped per token (`serving.sessions`); a plain tools/call
on a session past its handshake takes the lean lane (`runtime/http_lean.py`). On SIGTERM the
runner stops accepting and lets the requests in flight finish; then the database closes once
the last call has left the chain.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from colibri import __version__
from colibri.chain.worker import in_worker
from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.runtime import http_lean
from colibri.runtime.app import App
from colibri.runtime.duties import duties
from colibri.runtime.http_auth import DatabaseTokenVerifier, auth_settings, caller_of, caller_of_scope
from colibri.runtime.server import build_server
from colibri.runtime.tiles import tile_routes
from colibri.serving.guards import guarded
from colibri.serving.hosts import AllowedHosts, is_loopback
from colibri.serving.http import base_url, run_http
from colibri.serving.http_limits import HttpLimits
from colibri.serving.listen import listen
from colibri.serving.oauth.either import EitherVerifier
from colibri.serving.oauth.faces import oauth_verifier, protected_resource
from colibri.serving.protected_resource import protect
from colibri.serving.sessions import cap_sessions

if TYPE_CHECKING:
    from colibri.domains.log.note import Verifier
    from colibri.serving.oauth import OAuthSettings
    from colibri.serving.oauth.verifier import OAuthVerifier

log = logging.getLogger("colibri")
T = TypeVar("T")

BOOT_FAILED_ELSEWHERE = (
    "boot failed, serving MINIMAL (server_ping, server_health only); the reason is in the server's "
    "log and in /readyz asked from the server's own machine"
)


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    auth: bool = True
    allowed_hosts: Sequence[str] = ()
    public_url: str | None = None  # the base URL clients use, when not http://HOST:PORT
    limits: HttpLimits = field(default_factory=HttpLimits)  # COLIBRI_HTTP_*
    # The human pages at / (`colibri.ui`, wired by the CLI: it sits beside the runtime, not below),
    # given the identity provider's verifier when there is one.
    pages: Callable[[AppReader, OAuthVerifier | None], Sequence[Route]] | None = None
    oauth: OAuthSettings | None = None  # --oauth-*: the identity provider's tokens too (SPEC §20)


class AppReader:
    """The pages' way to the server's own database: under the chain's lock, in the chain's worker
    thread, like a tool call, so a page never shares the connection with a handler at the same time."""

    def __init__(self, app: App) -> None:
        self._app = app

    async def read(self, work: Callable[[Database], T]) -> T:
        if self._app.state.db is None:  # phase 2 sets it once the chain is built
            raise StorageError(f"the database is not open yet ({self._app.readiness() or 'booting'})")
        async with self._app.chain.lock:
            db = self._app.state.db
            if db is None:
                raise StorageError(f"the database is not open yet ({self._app.readiness() or 'booting'})")
            return await in_worker(work, db)

    def verifier(self) -> Verifier | None:
        """The verifier key of the signer this server holds in memory (no key file is read);
        None before phase 2, or where it signs nothing (a read-only mode)."""
        from colibri.domains.log.notary import Notary  # the crypto only once a page needs it

        notary = self._app.state.notary
        return notary.signer.verifier() if isinstance(notary, Notary) else None


def probe_routes(app: App) -> list[Route]:
    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "up", "version": __version__})

    async def readyz(request: Request) -> JSONResponse:
        reason = app.readiness()
        if reason is None:
            return JSONResponse({"status": "ready", "mode": app.state.mode.value})
        if app.state.boot_error is not None and not (request.client and is_loopback(request.client.host)):
            reason = BOOT_FAILED_ELSEWHERE
        return JSONResponse({"status": "not ready", "reason": reason}, status_code=503)

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]


async def serve_http(app: App, options: HttpOptions) -> None:
    """Serve until SIGTERM or SIGINT; returns with the database closed. A bad address is an
    `AddressError` raised before anything has started."""
    listener = listen(options.host, options.port)
    limits = options.limits
    server = build_server(app, identify=caller_of)
    url = (options.public_url or base_url(options.host, options.port)).rstrip("/")
    hosts = AllowedHosts.for_bind(options.host, options.allowed_hosts, options.public_url)
    resource = protected_resource(f"{url}/mcp", options.oauth)
    own = DatabaseTokenVerifier(app) if options.auth else None
    oauth = oauth_verifier(options.oauth, f"{url}/mcp")
    verifier = EitherVerifier(own, oauth) if oauth is not None else own
    web = server.streamable_http_app(
        host=options.host,
        # No tool sends anything before its answer (no progress, no log, no request of its own),
        # so each POST is answered with one JSON body: an event stream per call doubled the
        # server's work per call (3.5 against 1.8 ms of CPU, 16 clients calling thought_record).
        json_response=True,
        transport_security=hosts.transport_security(),
        auth=auth_settings(url) if options.auth else None,
        token_verifier=verifier,
        max_request_body_size=limits.max_body_bytes,
        session_idle_timeout=limits.session_idle_s,
        max_sessions=limits.max_sessions,
        custom_starlette_routes=[
            *probe_routes(app),
            *tile_routes(AppReader(app), require_token=options.auth, oauth=oauth, resource=resource),
            *(options.pages(AppReader(app), oauth) if options.pages else ()),
        ],
    )
    # A plain tools/call on a session past its handshake skips the SDK's dispatch (SPEC §25).
    lane = http_lean.install(server.session_manager, app, caller_of_scope)
    if lane is not None:
        server.middleware = [*server.middleware, lane.watch]
    if options.auth:  # before cap_sessions, which wraps what protect replaces
        protect(web, resource)
    cap_sessions(web, limits.max_sessions_per_principal, limits.session_idle_s)
    log.info(
        "colibri %s serving Streamable HTTP at %s/mcp (%s); mode %s",
        __version__,
        url,
        "bearer tokens required" if options.auth else "NO authentication, loopback only",
        app.config.mode,
    )
    async with anyio.create_task_group() as tasks:
        for duty in duties(app):
            tasks.start_soon(duty)
        if oauth is not None:
            tasks.start_soon(oauth.issuer.start)
        await run_http(guarded(web, hosts, limits), options.host, options.port, limits, listener=listener)
        tasks.cancel_scope.cancel()
    log.info("HTTP server stopped; closing the database once the last call has finished")
    await app.close_between_calls()
    if own is not None:
        await own.aclose()
