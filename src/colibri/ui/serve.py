"""`colibri ui`: the pages alone, over a read-only connection, on HOST:PORT.

The database is opened read-only (SQLite `mode=ro`), so no page can write even by mistake;
the pages then read what a running `colibri serve` writes. Host names are checked as for
`colibri serve --http`, so a page cannot be read through a rebound DNS name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette

from colibri import __version__
from colibri.domains.log.note import Verifier
from colibri.serving.http import LOOPBACK, WILDCARD, base_url, is_loopback, run_http
from colibri.storage import open_database
from colibri.ui.checkpoints import verifier_for
from colibri.ui.pages import page_routes
from colibri.ui.reader import OwnReader, Reader

log = logging.getLogger("colibri.ui")


def page_hosts(host: str, allowed_hosts: tuple[str, ...] = ()) -> frozenset[str] | None:
    """The Host names the pages answer to (None: any, for a wildcard bind), as for the MCP endpoint."""
    if host in WILDCARD:
        return None
    names = [*LOOPBACK, host, *allowed_hosts] if is_loopback(host) else [host, *allowed_hosts]
    return frozenset(name.lower() for name in names)


def web_app(
    reader: Reader, *, require_token: bool, host: str, verifier: Callable[[], Verifier | None]
) -> Starlette:
    hosts = page_hosts(host)
    return Starlette(routes=page_routes(reader, require_token=require_token, hosts=hosts, verifier=verifier))


async def serve_ui(
    db_path: Path, host: str, port: int, *, require_token: bool, signing_key: Path | None = None
) -> None:
    """Serve the pages until SIGTERM or SIGINT, then close the database."""
    db = open_database(db_path, readonly=True)
    try:
        app = web_app(
            OwnReader(db),
            require_token=require_token,
            host=host,
            verifier=lambda: verifier_for(db_path, signing_key),
        )
        log.info(
            "colibri %s ui at %s/ over %s (read-only; %s)",
            __version__,
            base_url(host, port),
            db_path.resolve(),
            "a token is required" if require_token else "NO authentication, loopback only",
        )
        await run_http(app, host, port)
    finally:
        db.close()
