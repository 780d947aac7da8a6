"""`"identity": "exchange"`: an HTTP downstream sees each caller as that caller, never with the
caller's own token (SPEC §20, "Identity through the gateway"; MCP forbids token passthrough).

The HTTP face sets `SUBJECT` to the identity provider's access token a request came with, around
that request (faces/mcp_server.py); it reaches no `Identity`, row or log. A call to an exchange
server (`Exchanged.call`) trades it at the issuer (RFC 8693, serving/oauth/exchange.py) for a token
whose audience is the server's URL, kept per (caller's token, server) until shortly before it
expires, and sends that as `Authorization: Bearer` on the call's own HTTP requests (`BearerAuth`
reads it from `_BEARER`, set in the sending task: the SDK posts each request in a copy of the
sender's context). A call that came with no such token (a tokens-file token, stdio's `local`), or
whose exchange the issuer refuses, is not sent (routing/identity_gate.py refuses the first kind at
admission; `ExchangeFailed` is the line behind it).

A Streamable HTTP server binds each MCP session to the credential that opened it (the SDK's
session manager compares client, issuer and subject, and answers 404 to any other), so each
principal gets its own connection, as `"isolate": "principal"` gives a stdio server its own process
(isolated.py): started at its first call, opened with its exchanged token, stopped when idle or
when that token runs out. The entry's shared connection (checks, listing) goes with the
switchboard's own client-credentials token for the server's URL (both scopes, to see every tool).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar

import anyio
import httpx2

from colibri.serving.oauth import OAuthSettings
from colibri.serving.oauth.exchange import Granted, TokenEndpoint, TokenRefused
from colibri.serving.oauth.issuer import Issuer
from colibri.switchboard.base import NotSent
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream.isolated import Isolated, Own
from colibri.switchboard.health import HealthMachine, Ticket

log = logging.getLogger("colibri.switchboard")

T = TypeVar("T")

# The identity provider's access token the request being handled came with (set by the HTTP face).
SUBJECT: ContextVar[str | None] = ContextVar("colibri_switchboard_subject", default=None)
# The exchanged token of the call being sent, read where its HTTP requests are made.
_BEARER: ContextVar[str | None] = ContextVar("colibri_switchboard_bearer", default=None)
KEPT_LIMIT = 4096  # exchanged tokens kept at most; the expired go first


class ExchangeFailed(NotSent):
    """No exchanged token for this call: nothing was sent."""

    kind = "failed token exchange"


class Tokens:
    """One issuer's tokens for the switchboard: exchanged ones per (caller's token, server), its own
    per server, and each principal's newest per server (what its own connection opens with)."""

    def __init__(self, settings: OAuthSettings) -> None:
        assert settings.client is not None  # config/load.py refuses an exchange entry without one
        self._endpoint = TokenEndpoint(Issuer(settings.issuer), settings.client)
        # Both scopes: a server lists a token only the tools its scope may call, and the switchboard
        # lists what any caller might call. This token makes no call: each call goes with its caller's.
        self._scope = " ".join(settings.scopes)
        self._exchanged: dict[tuple[str, str], Granted] = {}
        self._own: dict[str, Granted] = {}
        self._newest: dict[tuple[str, str], Granted] = {}
        self._locks: dict[Any, anyio.Lock] = {}

    async def exchanged(self, subject: str, resource: str, principal: str) -> Granted:
        """A token for `resource` in exchange for `subject`: kept from an earlier call, or asked for."""
        key = (hashlib.sha256(subject.encode()).hexdigest(), resource)
        async with self._lock(key):
            granted = self._exchanged.get(key)
            if granted is None or granted.use_until <= time.monotonic():
                granted = await self._endpoint.exchange(subject, resource)
                log.info(
                    "exchanged the token of %s for one for %s (used for %.0f s)",
                    principal,
                    resource,
                    max(granted.use_until - time.monotonic(), 0.0),
                )
                self._keep(key, granted)
        self._newest[resource, principal] = granted
        return granted

    def newest(self, resource: str, principal: str) -> str | None:
        """The newest exchanged token of `principal` for `resource` still in use, if any."""
        granted = self._newest.get((resource, principal))
        return None if granted is None or granted.use_until <= time.monotonic() else granted.token

    async def own(self, resource: str) -> str:
        """The switchboard's own token for `resource` (its client's client-credentials grant)."""
        async with self._lock(resource):
            granted = self._own.get(resource)
            if granted is None or granted.use_until <= time.monotonic():
                granted = self._own[resource] = await self._endpoint.client_credentials(resource, self._scope)
        return granted.token

    def _lock(self, key: Any) -> anyio.Lock:
        # One request to the issuer per key at a time: concurrent first calls wait for the one answer.
        return self._locks.setdefault(key, anyio.Lock())

    def _keep(self, key: tuple[str, str], granted: Granted) -> None:
        if len(self._exchanged) >= KEPT_LIMIT:
            now = time.monotonic()
            self._exchanged = {k: g for k, g in self._exchanged.items() if g.use_until > now}
            self._locks = {
                k: lock for k, lock in self._locks.items() if lock.locked() or k in self._exchanged
            }
            while len(self._exchanged) >= KEPT_LIMIT:
                del self._exchanged[next(iter(self._exchanged))]
        self._exchanged[key] = granted


# One per issuer and client, whichever servers exchange with it (a reload keeps what was granted).
_TOKENS: dict[OAuthSettings, Tokens] = {}


def tokens_for(settings: OAuthSettings) -> Tokens:
    tokens = _TOKENS.get(settings)
    if tokens is None:
        tokens = _TOKENS[settings] = Tokens(settings)
    return tokens


class BearerAuth(httpx2.Auth):
    """`Authorization: Bearer` on each HTTP request of an exchange server's connection: the call's
    exchanged token, else (what no call sent: initialize, checks, lists) the principal's newest on
    its own connection, and the switchboard's own token on the shared one."""

    def __init__(self, spec: ServerSpec, tokens: Tokens) -> None:
        assert spec.url is not None
        self._url = spec.url
        self._name = spec.name
        self._principal = spec.principal
        self._tokens = tokens
        self._said: str | None = None

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        token = await self._token()
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"
        yield request

    async def _token(self) -> str | None:
        if self._principal is not None:
            return _BEARER.get() or self._tokens.newest(self._url, self._principal)
        try:
            token = await self._tokens.own(self._url)
        except TokenRefused as exc:
            # Sent without a token, the request meets the server's 401 and fails as any refused one
            # would; an exception here would end the whole connection instead.
            if str(exc) != self._said:
                log.warning("%s: no token of the switchboard's own for its checks: %s", self._name, exc)
                self._said = str(exc)
            return None
        self._said = None
        return token


def bearer_auth(spec: ServerSpec) -> BearerAuth | None:
    """The auth of `spec`'s HTTP client: None unless it is an exchange server."""
    return None if spec.exchange is None else BearerAuth(spec, tokens_for(spec.exchange))


class Exchanged(Isolated):
    """An exchange server's connections, one per principal (see the module's docstring)."""

    def __init__(self, spec: ServerSpec, make: Callable[[ServerSpec], Own]) -> None:
        super().__init__(spec, make)
        assert spec.exchange is not None and spec.url is not None
        self._url = spec.url
        self._issuer = spec.exchange.issuer
        self._tokens = tokens_for(spec.exchange)

    async def call(
        self,
        principal: str | None,
        machine: HealthMachine,
        ticket: Ticket,
        send: Callable[[Any, Ticket], Awaitable[T]],
    ) -> T:
        subject = SUBJECT.get()
        if subject is None or principal is None:
            machine.release(ticket)
            raise ExchangeFailed(
                f"{self.spec.name} takes only callers signed in at {self._issuer}, whose token is "
                "exchanged for one of its own; this call came with no such token"
            )
        try:
            granted = await self._tokens.exchanged(subject, self._url, principal)
        except TokenRefused as exc:
            machine.release(ticket)
            log.warning("%s: the token exchange for %s failed: %s", self.spec.name, principal, exc)
            raise ExchangeFailed(f"the token exchange for {self.spec.name} failed: {exc}") from None
        sending = _BEARER.set(granted.token)
        try:
            return await super().call(principal, machine, ticket, send)
        finally:
            _BEARER.reset(sending)

    def own_spec(self, principal: str) -> ServerSpec:
        return replace(self.spec, principal=principal)

    def outlived(self, principal: str) -> bool:
        # Past its token, a principal's connection could not even be checked: it stops, and its
        # next call opens a new one with a new token.
        return self._tokens.newest(self._url, principal) is None


def pool(spec: ServerSpec, make: Callable[[ServerSpec], Own]) -> Isolated | None:
    """The per-principal connections of `spec`, if it has them (isolated.py, or an exchange server's)."""
    if spec.isolate:
        return Isolated(spec, make)
    if spec.exchange is not None and spec.principal is None:
        return Exchanged(spec, make)
    return None
