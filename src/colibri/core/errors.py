"""Errors that domain code raises; the chain turns them into envelopes in one place.

ColibriError
├── DomainError      a rule of a domain said no (unknown id, illegal move, ...)
└── StorageError     the database could not be opened, migrated or used
"""

from __future__ import annotations

from typing import Any


class ColibriError(Exception):
    """Base of every error Colibri raises on purpose."""


class DomainError(ColibriError):
    """A domain rule refused the call; `code` is stable, `message` says what would be right."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details


class WouldWait(ColibriError):
    """A write transaction asked not to wait found another writer holding the lock. Not a
    StorageError on purpose: nothing failed, the caller is to try again where waiting is fine."""


class StorageError(ColibriError):
    """The database could not be opened, migrated or used."""
