"""`serve --http` checks a bearer token by reading its one row (by digest), not every token's, on
each backend, and still refuses an unknown, revoked or expired token for its own reason."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from colibri.core.database import Database
from colibri.domains import access
from colibri.runtime.app import App
from colibri.runtime.config import Config
from colibri.runtime.http_auth import DatabaseTokenVerifier

pytestmark = pytest.mark.anyio
NOW = 1_000_000_000.0  # 2001: a token expiring a day later is long expired


async def test_a_token_is_checked_by_reading_its_own_row_only(
    fresh_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ours = [access.create(fresh_db, f"agent-{n}", access.Scope.WRITE, None, NOW) for n in range(40)]
    revoked = access.create(fresh_db, "gone", access.Scope.READ, None, NOW)
    access.revoke(fresh_db, "gone")
    expired = access.create(fresh_db, "old", access.Scope.READ, 1, NOW)
    app = App(Config(db_path=tmp_path / "unused.db"))
    app.state.db = fresh_db
    app.ready.set()
    verifier = DatabaseTokenVerifier(app)
    read: list[int] = []
    rows_of = verifier._rows

    async def counted(served: Database, sql: str, params: tuple[Any, ...] = ()) -> Sequence[Sequence[Any]]:
        rows = await rows_of(served, sql, params)
        read.append(len(rows))
        return rows

    verifier._rows = counted  # type: ignore[method-assign]  # counts what the database answered
    try:
        with caplog.at_level(logging.INFO, logger="colibri.http"):
            proved = await verifier.verify_token(ours[17])
            assert proved is not None and proved.client_id == "agent-17" and "write" in proved.scopes
            assert await verifier.verify_token(revoked) is None
            assert await verifier.verify_token(expired) is None
            assert await verifier.verify_token("col_" + "x" * 43) is None
    finally:
        await verifier.aclose()
    # Four checks, four statements, at most one row each (the unknown token's: none).
    assert read == [1, 1, 1, 0], read
    assert [record.getMessage() for record in caplog.records] == [
        "401: the token named 'gone' was revoked",
        "401: the token named 'old' has expired",
        "401: a bearer token this server never issued",
    ]
