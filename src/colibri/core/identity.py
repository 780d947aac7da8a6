"""Who a call is by, as the edge that authenticated it proved it (SPEC §20): one small frozen
object from the HTTP auth edge to the `actions` row.

`principal` is the name policies, limits and the log key on (a plain string: `local`,
`local:NAME`, a token's name, later an IdP claim). `issuer` and `token_id` tie the call to what
proved it, so an auditor can find the sign-in or the token: for a Colibri token (a tokens file, or
`colibri token create`) the issuer is None (Colibri issued it itself; no identity provider stands
behind it) and `token_id` is the token's SHA-256, the digest it is stored as; for an OAuth token
(later) the IdP's issuer and the JWT's `jti` (or the token's SHA-256). On stdio both are None.
`groups` are the IdP's groups of the principal (its groups claim), which policies and limits name as
`group:NAME`; they are not recorded. `via` names the gateway a principal came through, when a
Colibri trusted that gateway's signed statement of who its caller was (§20 "Identity through the
gateway").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Identity:
    principal: str
    issuer: str | None = None  # who issued the credential; None: Colibri itself, or none (stdio)
    token_id: str | None = None  # the credential's id: a JWT's jti, else the token's SHA-256 (hex)
    groups: tuple[str, ...] = ()  # the IdP's groups claim; policies name them `group:NAME`
    via: str | None = None  # the trusted gateway that vouched for the principal


def identity_of(who: str | Identity) -> Identity:
    """`who` as an Identity: a bare principal (stdio, a store's own events) proved by no credential."""
    return who if isinstance(who, Identity) else Identity(who)
