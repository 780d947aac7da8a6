"""A real PostgreSQL server for the test session, started from the machine's PostgreSQL 15 binaries.

initdb refuses to run as root, so as root the server runs as the `postgres` system user, in a
temporary folder it owns, on a free port of 127.0.0.1 (and a socket in that folder). Each test
gets its own database, copied from a migrated template (CREATE DATABASE ... TEMPLATE is a file
copy: far cheaper than migrating again). With CI=true a missing binary or driver fails the run.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from tests.helpers import missing_part

PG_BIN = Path(os.environ.get("COLIBRI_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
TEMPLATE = "colibri_template"


@dataclass
class PostgresServer:
    folder: Path
    port: int
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self, *, migrated: bool = True) -> str:
        """A fresh database's URL: migrated (from the template) or empty."""
        name = f"test_{os.getpid()}_{next(self._numbers)}"
        template = TEMPLATE if migrated else "template0"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
        return self.url(name)


def unavailable(reason: str) -> NoReturn:
    missing_part(f"PostgreSQL tests cannot run: {reason}")


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(options: str = "") -> Iterator[PostgresServer]:
    """The server, for as long as the iterator is open; `options` are more `-c name=value` settings."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        unavailable(f"psycopg is not installed ({exc})")
    if not (PG_BIN / "initdb").is_file():
        unavailable(f"no PostgreSQL server binaries in {PG_BIN} (apt-get install postgresql-15)")
    folder = Path(tempfile.mkdtemp(prefix="colibri-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"
    port = _free_port()
    initdb = [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    try:
        subprocess.run(
            _as_postgres([*initdb, "-E", "UTF8", "--locale=C", "--no-sync"]),
            check=True,
            capture_output=True,
            text=True,
        )
        # Durability is not under test here (no test kills the server): skip the fsyncs.
        settings = (
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            f" -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 {options}"
        )
        pg_ctl = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", settings, "-l", str(folder / "log")]
        subprocess.run(_as_postgres([*pg_ctl, "-w", "start"]), check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        unavailable(f"could not start PostgreSQL: {exc.stderr or exc.stdout}")
    server = PostgresServer(folder, port)
    try:
        _make_template(server)
        yield server
    finally:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def _make_template(server: PostgresServer) -> None:
    from colibri.storage.migrations import migrate
    from colibri.storage.postgres.database import PostgresDatabase
    from colibri.tools.catalog import migrations_for

    server.admin(f"CREATE DATABASE {TEMPLATE}")
    db = PostgresDatabase.open(server.url(TEMPLATE))
    try:
        migrate(db, migrations_for("postgres"))
    finally:
        db.close()
