"""Creating, listing, revoking and checking bearer tokens against the database.

The token's format, digest and constant-time comparison are `colibri.core.tokens`, shared with
the switchboard; this module only keeps the rows. Times are Unix seconds (`now` is passed
in, so the caller's clock decides and tests can move it).
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from colibri.core import tokens
from colibri.core.clock import utc_now
from colibri.core.database import Database

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
SECONDS_PER_DAY = 86_400


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"


class TokenError(ValueError):
    """A token request that cannot be honoured; the message says what would be right."""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    name: str
    scope: Scope
    created_at: str
    expires_at: int | None
    revoked_at: str | None

    def status(self, now: float) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


_COLUMNS = "name, scope, created_at, expires_at, revoked_at"


def _info(row: Sequence[Any]) -> TokenInfo:
    return TokenInfo(row[0], Scope(row[1]), row[2], row[3], row[4])


def create(db: Database, name: str, scope: Scope, expires_days: int | None, now: float) -> str:
    """Store a new token under `name` and return it: the only time it is ever shown."""
    if not NAME.fullmatch(name):
        raise TokenError(
            f"token name {name!r} is not valid: use 1 to 64 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit (the name is the principal in every audit row)"
        )
    if expires_days is not None and expires_days < 1:
        raise TokenError(f"--expires-days {expires_days} must be a whole number of days, at least 1")
    expires_at = None if expires_days is None else int(now) + expires_days * SECONDS_PER_DAY
    token = tokens.new_token()
    with db.atomic() as conn:
        if conn.execute("SELECT 1 FROM access_tokens WHERE name = ?", (name,)).fetchone():
            raise TokenError(
                f"a token named {name!r} already exists (names stay taken after revocation, so the "
                "audit trail keeps one meaning per principal); choose another name"
            )
        conn.execute(
            "INSERT INTO access_tokens (name, digest, scope, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            (name, tokens.digest(token), scope.value, utc_now(), expires_at),
        )
    return token


def list_tokens(db: Database) -> list[TokenInfo]:
    rows = db.tuples(f"SELECT {_COLUMNS} FROM access_tokens ORDER BY created_at, name").fetchall()
    return [_info(row) for row in rows]


def revoke(db: Database, name: str) -> None:
    with db.atomic() as conn:
        row = conn.execute("SELECT revoked_at FROM access_tokens WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise TokenError(f"no token named {name!r}; `colibri token list` shows the names")
        if row[0] is None:
            conn.execute("UPDATE access_tokens SET revoked_at = ? WHERE name = ?", (utc_now(), name))


# Kept for readers of every active token at once (no check reads them any more: see TOKEN_BY_DIGEST).
ACTIVE_TOKENS = f"SELECT {_COLUMNS}, digest FROM access_tokens WHERE revoked_at IS NULL"
# The one row a presented token can be, found through the index of the UNIQUE `digest` column, so a
# check reads one row however many tokens the database holds. Revoked rows are read too, so a
# refusal can name the token. Timing the index tells at most how much of a SHA-256 matched some
# stored digest, which says nothing of a secret token (nor of the digests, which are not secret
# against guessing 256 random bits); the digest found is still compared in constant time.
TOKEN_BY_DIGEST = f"SELECT {_COLUMNS}, digest FROM access_tokens WHERE digest = ?"


def well_formed(token: str) -> bool:
    """Whether `token` could be one of ours at all (else there is nothing to look up)."""
    return token.startswith(tokens.PREFIX)


def lookup(token: str) -> tuple[str, tuple[str]]:
    """The statement and parameters that read `token`'s row (of `TOKEN_BY_DIGEST`): its digest
    is the one parameter, for `judge`."""
    return TOKEN_BY_DIGEST, (tokens.digest(token),)


def judge(digest: str, rows: Sequence[Sequence[Any]], now: float) -> tuple[TokenInfo | None, str]:
    """The row of the token whose `digest` it is among `rows` (of `TOKEN_BY_DIGEST`) and its status:
    "active", "expired", "revoked" or "unknown" (then no row). Compared in constant time."""
    found: Sequence[Any] | None = None
    for row in rows:
        if hmac.compare_digest(digest, row[5]) and found is None:
            found = row
    if found is None:
        return None, "unknown"
    info = _info(found[:5])
    return info, info.status(now)


def authenticate(db: Database, token: str, now: float) -> TokenInfo | None:
    """The active token `token` is, or None (unknown, revoked or expired)."""
    if not well_formed(token):
        return None
    sql, params = lookup(token)
    info, status = judge(params[0], db.tuples(sql, params).fetchall(), now)
    return info if status == "active" else None


def match(token: str, rows: Sequence[Sequence[Any]], now: float) -> TokenInfo | None:
    """The active token `token` is among `rows` (of `ACTIVE_TOKENS` or `TOKEN_BY_DIGEST`), or None."""
    info, status = judge(tokens.digest(token), rows, now)
    return info if status == "active" else None
