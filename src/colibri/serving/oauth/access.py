"""A token an identity provider issued, as the SDK's auth middleware carries it (SPEC §20).

`OAuthAccess` is the SDK's `AccessToken` (so its bearer middleware and `RequireBearer` treat it as
any other) with what the audit row and the policies need beside the principal: the issuer, the
token's id (its `jti`, else its SHA-256) and the principal's groups.
"""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken

from colibri.core import tokens
from colibri.core.identity import Identity


class OAuthAccess(AccessToken):
    issuer: str
    token_id: str
    groups: tuple[str, ...] = ()


def identity_of_access(access: AccessToken) -> Identity:
    """Who `access` proves: an IdP's principal with its issuer, token id and groups, or a Colibri
    token's name (issuer None: Colibri issued it) with the token's SHA-256, the digest it is kept as."""
    if isinstance(access, OAuthAccess):
        return Identity(access.client_id, access.issuer, access.token_id, access.groups)
    return Identity(access.client_id, token_id=tokens.digest(access.token))
