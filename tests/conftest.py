"""Fixtures are factories: a fresh environment, a real subprocess server, a migrated database file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from colibri.storage import Database, SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import clean_env


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a `colibri serve` subprocess whose files all live in tmp_path."""
    return clean_env(tmp_path)


@pytest.fixture
def fresh_db(tmp_path: Path) -> Iterator[Database]:
    """A real SQLite file in tmp_path with every migration applied."""
    db = SQLiteDatabase.open(tmp_path / "unit.db")
    migrate(db, MIGRATIONS)
    yield db
    db.close()
