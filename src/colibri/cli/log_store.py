"""What the log's commands share: opening the store, and turning unusable input into exit 2.

Exit codes as for every command: 0 success, 1 the check failed, 2 unusable input (no such
file, a bad key, an index outside the log). Output on stdout; problems on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from colibri.core.errors import StorageError
from colibri.serving.exits import EXIT_USAGE
from colibri.storage import Database, open_database


class Unusable(Exception):
    """Input the command cannot work with; the message says what would be right."""


@contextmanager
def log_store(target: Path | str, *, readonly: bool = True) -> Iterator[Database]:
    """The store at `target` (a SQLite file or a PostgreSQL URL), which must hold a log."""
    path = target if isinstance(target, Path) else shown_url(target)
    if isinstance(target, Path) and not target.is_file():
        raise Unusable(f"database file {path} does not exist; pass the database with --db PATH")
    try:
        db = open_database(target, readonly=readonly)
    except StorageError as exc:
        raise Unusable(str(exc)) from exc
    try:
        if db.execute(db.dialect.table_exists, ("log_entries",)).fetchone() is None:
            raise Unusable(
                f"{path} has no verifiable log (table log_entries); open it once with `colibri serve`"
                " in FULL mode"
            )
        yield db
    except StorageError as exc:
        raise Unusable(f"cannot read {path}: {exc}") from exc
    finally:
        db.close()


def shown_url(url: str) -> str:
    """A PostgreSQL URL without its password (the driver is loaded only when a URL is used)."""
    from colibri.storage.postgres.urls import redact

    return redact(url)


def shown_store(target: Path | str) -> str:
    return str(target) if isinstance(target, Path) else shown_url(target)


def usage(command: str, message: str) -> int:
    print(f"colibri {command}: {message}", file=sys.stderr)
    return EXIT_USAGE
