"""`colibri ui`: the pages alone, over a read-only connection, on HOST:PORT.

The store (a SQLite file, or a PostgreSQL URL from COLIBRI_DB_URL) is opened read-only (SQLite
`mode=ro`, PostgreSQL `default_transaction_read_only`), so no page can write even by mistake;
the pages then read what a running `colibri serve` writes. The face has the same checks in
front of every route as `colibri serve --http` (`serving.guards`): the Host/Origin allow-list,
the body caps, the anti-framing headers. Signatures are checked with a verifier key only: the
signer's key file is never opened.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from colibri import __version__
from colibri.domains.log.note import Verifier
from colibri.serving.guards import guarded
from colibri.serving.hosts import AllowedHosts
from colibri.serving.http import base_url, run_http
from colibri.serving.http_limits import HttpLimits
from colibri.serving.listen import listen
from colibri.serving.oauth import OAuthSettings
from colibri.serving.oauth.faces import oauth_verifier, protected_resource
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.protected_resource import metadata_routes
from colibri.storage import open_database
from colibri.ui.approvals_views import Writable
from colibri.ui.checker import CHECKER
from colibri.ui.pages import page_routes
from colibri.ui.reader import OwnReader, Reader
from colibri.ui.render import not_found

log = logging.getLogger("colibri.ui")


@dataclass(frozen=True, slots=True)
class UiOptions:
    host: str
    port: int
    require_token: bool = True
    allowed_hosts: Sequence[str] = ()
    public_url: str | None = None
    verifier: Verifier | None = None  # --verifier-key
    limits: HttpLimits = field(default_factory=HttpLimits)  # COLIBRI_HTTP_*
    switchboard_config: str | None = None  # --switchboard-config: named in the pins page's commands
    oauth: OAuthSettings | None = None  # --oauth-*: the identity provider's tokens too (SPEC §20)


def web_app(
    reader: Reader, options: UiOptions, oauth: OAuthVerifier | None = None, writable: Writable = None
) -> ASGIApp:
    """The pages; `oauth` proves the identity provider's tokens (from `ui_oauth`); `writable` opens the
    store for a decision on /approvals."""
    hosts = AllowedHosts.for_bind(options.host, options.allowed_hosts, options.public_url)
    routes = page_routes(
        reader,
        require_token=options.require_token,
        verifier=lambda: options.verifier,
        public_url=options.public_url,
        switchboard_config=options.switchboard_config,
        oauth=oauth,
        writable=writable,
    )
    if options.require_token:
        # The ui has no /mcp: its resource is its pages' root, named at both well-known paths (SPEC §20).
        routes = [*metadata_routes(protected_resource(_root(options), options.oauth)), *routes]
    return guarded(Starlette(routes=routes, exception_handlers={404: _no_page}), hosts, options.limits)


def _root(options: UiOptions) -> str:
    return (options.public_url or base_url(options.host, options.port)).rstrip("/")


def ui_oauth(options: UiOptions) -> OAuthVerifier | None:
    """The verifier of the ui's identity provider; its tokens' audience defaults to the ui's root."""
    return oauth_verifier(options.oauth, _root(options))


async def _no_page(request: Request, _: Exception) -> Response:
    return not_found(f"There is no page {request.url.path}.", "/", "the board")


async def serve_ui(target: Path | str, options: UiOptions) -> None:
    """Serve the pages of the store at `target` (a SQLite path or a PostgreSQL URL) until SIGTERM
    or SIGINT, then close it. A bad address is an `AddressError` raised before the store is opened."""
    listener = listen(options.host, options.port)
    try:
        db = open_database(target, readonly=True)
    except BaseException:
        listener.close()
        raise
    try:
        log.info(
            "colibri %s ui at %s/ over %s (read-only; %s; %s)",
            __version__,
            (options.public_url or base_url(options.host, options.port)).rstrip("/"),
            target.resolve() if isinstance(target, Path) else db,  # str(db): the URL, no password
            "a token is required" if options.require_token else "NO authentication, loopback only",
            "checkpoints checked with the verifier key given" if options.verifier else "no verifier key",
        )
        oauth = ui_oauth(options)
        # A decision on /approvals is the ui's one write: its own connection, opened for it (SPEC §22).
        app = web_app(OwnReader(db), options, oauth, writable=lambda: open_database(target))
        async with anyio.create_task_group() as tasks:
            if oauth is not None:
                tasks.start_soon(oauth.issuer.start)
            await run_http(app, options.host, options.port, options.limits, listener=listener)
            tasks.cancel_scope.cancel()
    finally:
        CHECKER.shutdown()
        db.close()
