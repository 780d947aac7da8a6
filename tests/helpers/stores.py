"""A store as an older Colibri left it: migrated up to, not including, one migration."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.storage import Database, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers import postgres as pg


def store_before(migration: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    """A SQLite file or a fresh PostgreSQL database with every migration named before `migration`."""
    if backend == "sqlite":
        db = open_database(tmp_path / "old.db")
    else:
        server: pg.PostgresServer = request.getfixturevalue("postgres_server")
        db = open_database(server.new_database(migrated=False))
    migrate(db, [m for m in migrations_for(db.dialect.name) if m.name < migration])
    return db
