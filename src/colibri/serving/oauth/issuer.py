"""The identity provider as a face sees it (SPEC §20): its metadata and its signing keys.

Metadata comes from RFC 8414 (`/.well-known/oauth-authorization-server`, inserted before the
issuer's path) or, failing that, OpenID discovery (`…/.well-known/openid-configuration`); its
`issuer` must be the configured one (RFC 8414 §3.3). Keys come from its `jwks_uri` and are kept:
a token naming a key not yet seen fetches them again, at most once a minute, so a provider that
rotates its keys is followed without a restart and a flood of made-up key ids costs one request a
minute. An unreachable provider leaves the keys already fetched working; before any arrive, OAuth
tokens are refused (the reason logged) and the faces' own tokens keep working.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
import jwt

log = logging.getLogger("colibri.oauth")

REFRESH_EVERY_S = 60.0
TIMEOUT_S = 5.0
OPENID = "/.well-known/openid-configuration"


class IssuerUnavailable(Exception):
    """The provider's metadata or keys could not be had; the message says what was tried."""


@dataclass(frozen=True, slots=True)
class Metadata:
    issuer: str
    jwks_uri: str
    token_endpoint: str | None
    introspection_endpoint: str | None


def well_known(issuer: str, suffix: str) -> str:
    """RFC 8414 §3.1: the well-known path goes between the host and the issuer's own path."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{suffix}{path}", "", ""))


class Issuer:
    """One provider's metadata and keys, fetched with httpx and cached."""

    def __init__(
        self,
        issuer: str,
        client: httpx2.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self._client = client
        self._clock = clock
        self._metadata: Metadata | None = None
        self._keys: dict[str, jwt.PyJWK] = {}
        self._asked_at: float | None = None  # when a token last made us fetch (not the start's)
        self._lock = anyio.Lock()

    @property
    def ready(self) -> bool:
        return bool(self._keys)

    async def start(self) -> None:
        """One attempt at the metadata and keys at start; a failure is said in one line, not raised."""
        try:
            await self._refresh()
        except IssuerUnavailable as exc:
            log.warning(
                "the identity provider %s cannot be reached (%s); its tokens are refused until its "
                "keys arrive (tried again at most once a minute); Colibri tokens keep working",
                self.issuer,
                exc,
            )
        else:
            log.info("identity provider %s: %d signing key(s)", self.issuer, len(self._keys))

    async def metadata(self) -> Metadata:
        if self._metadata is None:
            async with self._lock:
                if self._metadata is None:
                    self._metadata = await self._discover()
        return self._metadata

    async def key(self, kid: str | None) -> jwt.PyJWK | None:
        """The signing key `kid` names (with no kid: the only key), fetching the keys again for
        one not yet seen when the last fetch is over a minute old."""
        found = self._pick(kid)
        if found is not None or not self._may_ask():
            return found
        async with self._lock:
            if self._pick(kid) is None and self._may_ask():
                self._asked_at = self._clock()  # a failed try counts too: not again for a minute
                try:
                    await self._refresh_locked()
                except IssuerUnavailable as exc:
                    log.warning("could not fetch the keys of %s: %s", self.issuer, exc)
        return self._pick(kid)

    def _may_ask(self) -> bool:
        return self._asked_at is None or self._clock() - self._asked_at >= REFRESH_EVERY_S

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is not None:
            return self._keys.get(kid)
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None

    async def _refresh(self) -> None:
        async with self._lock:
            await self._refresh_locked()

    async def _refresh_locked(self) -> None:
        if self._metadata is None:
            self._metadata = await self._discover()
        document = await self._get(self._metadata.jwks_uri)
        keys: dict[str, jwt.PyJWK] = {}
        for raw in document.get("keys", []) if isinstance(document.get("keys"), list) else []:
            if not isinstance(raw, dict) or raw.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK.from_dict(raw)
            except jwt.PyJWTError as exc:  # a key type or algorithm PyJWT cannot use is left out
                log.info("ignored a key of %s: %s", self.issuer, exc)
                continue
            keys[str(raw.get("kid", ""))] = key
        if not keys:
            raise IssuerUnavailable(f"{self._metadata.jwks_uri} holds no signing key Colibri can use")
        self._keys = keys

    async def _discover(self) -> Metadata:
        tried = []
        # RFC 8414's path first; then OpenID Connect Discovery's, appended to the issuer (§4).
        urls = (well_known(self.issuer, "oauth-authorization-server"), self.issuer.rstrip("/") + OPENID)
        for url in urls:
            try:
                document = await self._get(url)
            except IssuerUnavailable as exc:
                tried.append(str(exc))
                continue
            if document.get("issuer") != self.issuer:
                raise IssuerUnavailable(
                    f"{url} names the issuer {document.get('issuer')!r}, not {self.issuer!r} (RFC 8414 §3.3)"
                )
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str):
                raise IssuerUnavailable(f"{url} names no jwks_uri")
            return Metadata(
                self.issuer,
                jwks_uri,
                _optional_url(document, "token_endpoint"),
                _optional_url(document, "introspection_endpoint"),
            )
        raise IssuerUnavailable("; ".join(tried))

    async def _get(self, url: str) -> dict[str, Any]:
        try:
            if self._client is not None:
                response = await self._client.get(url, timeout=TIMEOUT_S)
            else:
                async with httpx2.AsyncClient(timeout=TIMEOUT_S) as client:
                    response = await client.get(url)
            response.raise_for_status()
            document = response.json()
        except (httpx2.HTTPError, ValueError) as exc:
            raise IssuerUnavailable(f"GET {url}: {exc}") from exc
        if not isinstance(document, dict):
            raise IssuerUnavailable(f"GET {url}: not a JSON object")
        return document


def _optional_url(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    return value if isinstance(value, str) else None
