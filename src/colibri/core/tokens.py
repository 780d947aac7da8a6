"""Bearer tokens: made here, stored only as their SHA-256, compared in constant time.

Shared by every place that checks a bearer token (the switchboard's tokens file today, the
database-backed tokens of `colibri serve --http` later), so all of them agree on the format.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

PREFIX = "col_"
# 32 random bytes: far beyond guessing; the prefix lets secret scanners recognise a leaked token.
ENTROPY_BYTES = 32


def new_token() -> str:
    """A fresh random token, shown once to whoever creates it."""
    return PREFIX + secrets.token_urlsafe(ENTROPY_BYTES)


def digest(token: str) -> str:
    """The hex SHA-256 stored in place of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def find(token: str, digests: Iterable[str]) -> int | None:
    """The index of the stored digest `token` matches, or None; every comparison in constant time."""
    candidate = digest(token)
    found: int | None = None
    for index, stored in enumerate(digests):
        if hmac.compare_digest(candidate, stored) and found is None:
            found = index
    return found
