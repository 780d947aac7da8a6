"""Fixtures are factories: a fresh environment, a real subprocess server, a migrated database.

`fresh_db` and `store` are parametrised over both storage backends, so every test that takes
them runs on SQLite and on a PostgreSQL server the session starts itself (tests/helpers/postgres.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import clean_env
from tests.helpers import postgres as pg

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


# What may appear in a checkout while the suite runs without being its output: bytecode, written by
# every import (unless PYTHONDONTWRITEBYTECODE is set), and the caches of the developer's own tools —
# pytest's (written by the run itself, at its end), mypy's and ruff's (which `make lint` or an editor
# may write while the suite runs). Everything else git shows, ignored files included (.hypothesis/,
# data/), the run must not leave.
NOT_TEST_OUTPUT = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
_BEFORE = pytest.StashKey[set[str] | None]()
_HYPOTHESIS_HOME = pytest.StashKey[str]()

# Hypothesis keeps its example database (and a cache of Unicode tables) in `.hypothesis/` of the
# working folder, which is the checkout: the examples are not kept between runs, and the cache lives
# in a temporary folder of each process (pytest_configure).
settings.register_profile("colibri", database=None)
settings.load_profile("colibri")


def checkout_state(root: Path) -> set[str] | None:
    """What `git status` shows of the checkout at `root`, ignored and untracked files one by one,
    less NOT_TEST_OUTPUT; and its top-level folders that hold no file, which git does not show
    (`make run` makes an empty `data/`). None outside a git checkout."""
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    state = {
        line for line in done.stdout.splitlines() if NOT_TEST_OUTPUT.isdisjoint(re.split(r'[/"]', line[3:]))
    }
    state.update(
        f"empty folder {entry.name}/"
        for entry in root.iterdir()
        if entry.is_dir() and not any(files for _, _, files in os.walk(entry))
    )
    return state


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The checkout as the run found it. Under xdist the controller alone compares: it looks before
    its workers start and after they have all finished, so no worker's file is ever half-made."""
    if not _is_xdist_worker(session.config):
        session.config.stash[_BEFORE] = checkout_state(session.config.rootpath)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The suite writes nothing into the checkout (SPEC §14): whatever `git status` shows at the end
    that it did not show at the start was left by the run, and fails it, named."""
    before = session.config.stash.get(_BEFORE, None)
    after = None if before is None else checkout_state(session.config.rootpath)
    if before is None or after is None:
        return
    left = sorted(after - before)
    if not left:
        return
    lines = [
        "the test run left these in the checkout; a test writes only under tmp_path "
        "(or another temporary folder):",
        *(f"  {line}" for line in left),
    ]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print("\n".join(lines), file=sys.stderr)
    else:
        reporter.write_sep("=", "left in the checkout", red=True)
        for line in lines:
            reporter.write_line(line, red=True)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg.PostgresServer]:
    yield from pg.start()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: the test reads or alters the SQLite file itself (runs on SQLite alone)"
    )
    home = tempfile.mkdtemp(prefix="colibri-hypothesis-")
    set_hypothesis_home_dir(home)
    config.stash[_HYPOTHESIS_HOME] = home


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HYPOTHESIS_HOME, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


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
