"""Fixtures are factories: a fresh environment, a real subprocess server, a migrated database.

`fresh_db` and `store` are parametrised over both storage backends, so every test that takes
them runs on SQLite and on a PostgreSQL server the session starts itself (tests/helpers/postgres.py).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import clean_env
from tests.helpers import postgres as pg

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


CHECKOUT = Path(__file__).resolve().parent.parent


def _untracked_or_changed() -> set[str] | None:
    """`git status --porcelain` of the checkout, as a set of lines (None outside a git checkout)."""
    if shutil.which("git") is None or not (CHECKOUT / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=False,
    )
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


@pytest.fixture(scope="session", autouse=True)
def leaves_the_checkout_clean() -> Iterator[None]:
    """The suite writes nothing into the checkout (SPEC §14): every file a test makes lives in a
    temporary folder. Whatever `git status` shows at the end that it did not show at the start was
    left by the run, and fails it, named."""
    before = _untracked_or_changed()
    yield
    after = _untracked_or_changed()
    if before is not None and after is not None:
        left = sorted(after - before)
        assert left == [], f"the test run left these in the checkout: {left}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg.PostgresServer]:
    yield from pg.start()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: the test reads or alters the SQLite file itself (runs on SQLite alone)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only") is not None
        metafunc.parametrize("backend", ["sqlite"] if only else BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where a fresh, migrated store lives: a SQLite path, or a PostgreSQL URL."""
    if backend == "sqlite":
        path = tmp_path / "unit.db"
        db = SQLiteDatabase.open(path)
        migrate(db, MIGRATIONS)
        db.close()
        return str(path)
    server: pg.PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture
def open_store(store: str) -> Iterator[Callable[..., Database]]:
    """Opens more connections to the test's store (another process's view of it); closes them after."""
    opened: list[Database] = []

    def open_(*, readonly: bool = False) -> Database:
        db = open_database(store, readonly=readonly)
        opened.append(db)
        return db

    yield open_
    for db in opened:
        db.close()


@pytest.fixture
def fresh_db(open_store: Callable[..., Database]) -> Database:
    """A migrated store on each backend in turn."""
    return open_store()


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a `colibri serve` subprocess whose files all live in tmp_path."""
    return clean_env(tmp_path)


@pytest.fixture
def backend_env(tmp_path: Path, store: str) -> dict[str, str]:
    """`server_env` whose store is the test's backend: a SQLite file, or COLIBRI_DB_URL."""
    if store.startswith("postgresql://"):
        return clean_env(tmp_path, COLIBRI_DB_URL=store)
    return clean_env(tmp_path, COLIBRI_DB_PATH=store)
