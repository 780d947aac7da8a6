"""Access: the bearer tokens of `colibri serve --http`, stored only as their SHA-256 (SPEC §9)."""

from colibri.domains.access.schema import MIGRATIONS, POSTGRES_MIGRATIONS
from colibri.domains.access.store import (
    ACTIVE_TOKENS,
    TOKEN_BY_DIGEST,
    Scope,
    TokenError,
    TokenInfo,
    authenticate,
    create,
    judge,
    list_tokens,
    lookup,
    match,
    revoke,
    well_formed,
)

__all__ = [
    "ACTIVE_TOKENS",
    "MIGRATIONS",
    "POSTGRES_MIGRATIONS",
    "TOKEN_BY_DIGEST",
    "Scope",
    "TokenError",
    "TokenInfo",
    "authenticate",
    "create",
    "judge",
    "list_tokens",
    "lookup",
    "match",
    "revoke",
    "well_formed",
]
