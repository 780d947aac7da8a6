"""Who a call is by, as the edge that authenticated it proved it (SPEC §20): one small frozen
object from the HTTP auth edge to the `actions` row.

`principal` is the name policies, limits and the log key on (a plain string: `local`,
`local:NAME`, a token's name, later an IdP claim). `issuer` and `token_id` tie the call to what
proved it, so an auditor can find the sign-in or the token: for a Colibri token (a tokens file, or
`colibri token create`) the issuer is None (Colibri issued it itself; no identity provider stands
behind it) and `token_id` is the token's SHA-256, the digest it is stored as; for an OAuth token
(later) the IdP's issuer and the JWT's `jti` (or the token's SHA-256). On stdio both are None.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Identity:
    principal: str
    issuer: str | None = None  # who issued the credential; None: Colibri itself, or none (stdio)
    token_id: str | None = None  # the credential's id: a JWT's jti, else the token's SHA-256 (hex)


def identity_of(who: str | Identity) -> Identity:
    """`who` as an Identity: a bare principal (stdio, a store's own events) proved by no credential."""
    return who if isinstance(who, Identity) else Identity(who)
