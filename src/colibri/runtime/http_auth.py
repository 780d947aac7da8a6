"""Bearer-token authentication for `colibri serve --http`, through the SDK's auth support.

`DatabaseTokenVerifier` is the SDK `TokenVerifier`: the SDK's middleware calls it for every
HTTP request; when it says no, `serving.protected_resource` answers 401 with `WWW-Authenticate:
Bearer resource_metadata=..., scope=...` and publishes the RFC 9728 metadata. `caller_of` then reads the
proved token back inside a request handler, as the `Caller` the chain records.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerRequestContext
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.types import Scope

from colibri.core.callers import LOCAL, Caller
from colibri.core.errors import StorageError
from colibri.domains import access
from colibri.runtime.app import App
from colibri.serving.bearer import RefusalLog
from colibri.serving.oauth.access import identity_of_access
from colibri.storage import Database, async_reader, open_database

if TYPE_CHECKING:
    from colibri.storage.postgres.reader import AsyncReader

log = logging.getLogger("colibri.http")

SCOPES = {access.Scope.READ: ["read"], access.Scope.WRITE: ["read", "write"]}
# How a refusal's log line says why one of our tokens was refused.
REFUSED = {"revoked": "was revoked", "expired": "has expired"}


class DatabaseTokenVerifier:
    """Checks a presented token against `access_tokens` in the server's own database.

    On a read-only connection of its own, so a check never waits for the chain's lock (a batch
    of write calls holds it while it commits, chain/group.py) and never waits for a writer: on
    SQLite a WAL read, quick enough for the event loop; on PostgreSQL a round trip awaited on
    the loop (storage/postgres/reader.py says why not in a worker thread). Every request reads
    its token's one row (by its digest's index), so a revoked token is refused at once.
    """

    def __init__(self, app: App) -> None:
        self._app = app
        self._refusals = RefusalLog(log)
        self._db: Database | None = None
        self._reader: AsyncReader | None = None

    async def verify_token(self, token: str) -> AccessToken | None:
        app = self._app
        # Tokens live in the database, so nothing can be proved before phase 2 has opened it.
        await app.wait_ready()
        served = app.state.db
        if served is None:
            log.warning("refused a bearer token: the database is not open (%s)", app.state.boot_error)
            return None
        if not access.well_formed(token):
            self._refusals.refused("unknown", "a bearer token that is not a Colibri token (col_...)")
            return None
        try:
            sql, params = access.lookup(token)
            info, status = access.judge(params[0], await self._rows(served, sql, params), time.time())
        except StorageError as exc:
            log.error("could not check a bearer token: %s", exc)
            return None
        if info is None:
            self._refusals.refused("unknown", "a bearer token this server never issued")
            return None
        if status != "active":  # one of ours: the log names it, never the token itself
            self._refusals.refused(status, f"the token named {info.name!r} {REFUSED[status]}")
            return None
        return AccessToken(
            token=token, client_id=info.name, scopes=SCOPES[info.scope], expires_at=info.expires_at
        )

    async def _rows(
        self, served: Database, sql: str, params: tuple[Any, ...] = ()
    ) -> Sequence[Sequence[Any]]:
        if served.dialect.name != "sqlite":
            if self._reader is None:
                self._reader = async_reader(served.target)
            return await self._reader.rows(sql, params)
        if self._db is None:
            self._db = open_database(served.target, readonly=True)
        rows: Sequence[Sequence[Any]] = self._db.tuples(sql, params).fetchall()
        return rows

    async def aclose(self) -> None:
        db, self._db = self._db, None
        reader, self._reader = self._reader, None
        if db is not None:
            db.close()
        if reader is not None:
            await reader.aclose()


def auth_settings(base_url: str) -> AuthSettings:
    """Resource-server settings: the metadata names this server as its own token issuer
    (tokens come from `colibri token create`, there is no OAuth authorization server)."""
    return AuthSettings(
        issuer_url=AnyHttpUrl(base_url),
        resource_server_url=AnyHttpUrl(f"{base_url}/mcp"),
        required_scopes=["read"],
        # Our tokens are bound to this server by living in its database, not by an audience.
        validate_token_resource=False,
    )


def caller_of(ctx: ServerRequestContext[Any, Any], anonymous: Caller = LOCAL) -> Caller:
    """The proved caller of the request in `ctx`; `anonymous` where no token is required."""
    request = ctx.request
    if isinstance(request, Request) and isinstance(request.scope.get("user"), AuthenticatedUser):
        return caller_of_scope(request.scope, anonymous)
    token = get_access_token()
    return anonymous if token is None else _caller(token)


def caller_of_scope(scope: Scope, anonymous: Caller = LOCAL) -> Caller:
    """The proved caller of the HTTP request `scope` is (the lean lane's way: no SDK context)."""
    user = scope.get("user")
    return _caller(user.access_token) if isinstance(user, AuthenticatedUser) else anonymous


def _caller(token: AccessToken) -> Caller:
    # The audit row ties the call to its token: an IdP's issuer and jti, or the digest a Colibri
    # token is stored as (SPEC §20); the groups are for policies.
    who = identity_of_access(token)
    scope = "write" if "write" in token.scopes else "read"
    return Caller(who.principal, who.issuer, who.token_id, who.groups, scope=scope)
