"""A face's two kinds of token side by side (SPEC §20: "both may be on at once").

Colibri's own tokens (`col_…`, from a tokens file or `colibri token create`) go to the face's own
check; any other token to the identity provider's. The prefix decides, so a token is proved once,
by the one party that could have issued it, and a provider being away never slows Colibri's own.
"""

from __future__ import annotations

from typing import Protocol

from mcp.server.auth.provider import AccessToken

from colibri.core import tokens
from colibri.serving.oauth.verifier import OAuthVerifier


class TokenVerifier(Protocol):
    async def verify_token(self, token: str) -> AccessToken | None: ...


class EitherVerifier:
    def __init__(self, own: TokenVerifier | None, oauth: OAuthVerifier | None) -> None:
        self.own = own
        self.oauth = oauth

    async def verify_token(self, token: str) -> AccessToken | None:
        if token.startswith(tokens.PREFIX):
            return None if self.own is None else await self.own.verify_token(token)
        return None if self.oauth is None else await self.oauth.verify_token(token)
