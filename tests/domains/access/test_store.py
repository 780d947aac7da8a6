"""The token store on a real SQLite file: only digests kept, names unique, expiry and revocation."""

from __future__ import annotations

import pytest

from colibri.core import tokens
from colibri.domains import access
from colibri.storage import Database

NOW = 1_800_000_000.0


def test_a_created_token_authenticates_and_only_its_digest_is_stored(fresh_db: Database) -> None:
    token = access.create(fresh_db, "alice", access.Scope.WRITE, None, NOW)
    assert token.startswith(tokens.PREFIX)
    stored = fresh_db.execute("SELECT * FROM access_tokens").fetchall()
    assert len(stored) == 1 and token not in [str(value) for value in tuple(stored[0])]
    assert stored[0]["digest"] == tokens.digest(token)
    info = access.authenticate(fresh_db, token, NOW)
    assert info is not None and (info.name, info.scope) == ("alice", access.Scope.WRITE)
    assert access.authenticate(fresh_db, token + "x", NOW) is None
    assert access.authenticate(fresh_db, "not-even-the-prefix", NOW) is None


def test_expiry_is_checked_against_the_clock(fresh_db: Database) -> None:
    token = access.create(fresh_db, "ci", access.Scope.READ, 2, NOW)
    assert access.authenticate(fresh_db, token, NOW + 2 * 86_400 - 1) is not None
    assert access.authenticate(fresh_db, token, NOW + 2 * 86_400) is None
    [info] = access.list_tokens(fresh_db)
    assert info.status(NOW + 2 * 86_400) == "expired" and info.status(NOW) == "active"


def test_revocation_refuses_the_token_and_keeps_the_name_taken(fresh_db: Database) -> None:
    token = access.create(fresh_db, "bob", access.Scope.WRITE, None, NOW)
    access.revoke(fresh_db, "bob")
    access.revoke(fresh_db, "bob")  # twice is harmless
    assert access.authenticate(fresh_db, token, NOW) is None
    assert access.list_tokens(fresh_db)[0].status(NOW) == "revoked"
    with pytest.raises(access.TokenError, match="already exists"):
        access.create(fresh_db, "bob", access.Scope.WRITE, None, NOW)
    with pytest.raises(access.TokenError, match="no token named"):
        access.revoke(fresh_db, "nobody")


@pytest.mark.parametrize("name", ["", "-leading", "has space", "x" * 65, "semi;colon"])
def test_bad_names_and_expiries_are_refused(fresh_db: Database, name: str) -> None:
    with pytest.raises(access.TokenError, match="not valid"):
        access.create(fresh_db, name, access.Scope.READ, None, NOW)
    with pytest.raises(access.TokenError, match="at least 1"):
        access.create(fresh_db, "fine", access.Scope.READ, 0, NOW)
    assert access.list_tokens(fresh_db) == []
