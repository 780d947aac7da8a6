"""What the HTTP face adds around /mcp: who may call (the tokens file, the identity provider's
tokens, or both: SPEC §14, §20), the status page, and the challenge of a refusal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from colibri.core.identity import Identity
from colibri.serving.bearer import Verify
from colibri.serving.http import base_url
from colibri.serving.oauth import identity_of_access
from colibri.serving.oauth.either import EitherVerifier
from colibri.serving.oauth.faces import oauth_verifier, protected_resource
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.protected_resource import ProtectedResource, protect
from colibri.switchboard.audit import Pins
from colibri.switchboard.faces.serving import Serving
from colibri.switchboard.faces.status_page import status_routes
from colibri.switchboard.faces.tokens import TokensFile
from colibri.switchboard.routing import Switchboard


@dataclass(frozen=True, slots=True)
class FaceAuth:
    """Who the face at http://HOST:PORT may serve: `verifier` None serves without tokens (loopback)."""

    resource: ProtectedResource
    verifier: EitherVerifier | None
    oauth: OAuthVerifier | None

    @classmethod
    def of(cls, options: Serving, host: str, port: int) -> FaceAuth:
        url = f"{base_url(host, port)}/mcp"
        oauth = oauth_verifier(options.oauth, url)
        tokens = None if options.tokens is None else TokensFile(options.tokens)
        verifier = None if tokens is None and oauth is None else EitherVerifier(tokens, oauth)
        return cls(protected_resource(url, options.oauth), verifier, oauth)

    def check(self) -> Verify | None:
        """Whether a token may read the face's pages (/metrics); None without tokens."""
        named = self.name()
        if named is None:
            return None

        async def known(token: str) -> bool:
            return await named(token) is not None

        return known

    def name(self) -> Callable[[str], Awaitable[Identity | None]] | None:
        """Who a token proves, with its groups (None for a refused one); None when serving without
        tokens."""
        verifier = self.verifier
        if verifier is None:
            return None

        async def named(token: str) -> Identity | None:
            found = await verifier.verify_token(token)
            return None if found is None else identity_of_access(found)

        return named

    def sdk(self, host: str, port: int) -> dict[str, Any]:
        """The SDK's bearer-token middleware over the verifier; nothing when serving without tokens."""
        if self.verifier is None:
            return {}
        shown = f"[{host}]" if ":" in host else host
        settings = AuthSettings(issuer_url=AnyHttpUrl(f"http://{shown}:{port}"), resource_server_url=None)
        return {"auth": settings, "token_verifier": self.verifier}

    def challenge(self, app: Starlette) -> None:
        """With tokens, /mcp's 401 and 403 name the RFC 9728 metadata, served at both well-known paths
        (SPEC §20); call it before `cap_sessions`."""
        if self.verifier is not None:
            protect(app, self.resource)


def status_page(board: Switchboard, auth: FaceAuth, pins: Pins | None = None) -> list[Any]:
    """GET /status for people (SPEC §13), behind the same tokens as /mcp when there are any; with
    pins, each changed tool's diff (SPEC §21)."""
    return status_routes(board.router.status_for, auth.name(), None if pins is None else pins.diffs)
