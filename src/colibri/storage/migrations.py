"""Versioned migrations: ordered, named, recorded in the database.

Applying the list twice is a no-op. What is pending is applied in one transaction, all or none: a
failing migration leaves no trace, nor do those before it in the same run, and a new store pays
for one commit instead of one per migration (each a sync of the file: part of every cold start
on a fresh store).
The runner is the same for every backend; each backend has its own list of migrations
(its DDL), gathered per backend by the catalogue (tools/catalog.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from colibri.core.database import Database
from colibri.storage.errors import SchemaError, StorageError

_LEDGER = "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step. `statements` run in order inside a single transaction."""

    name: str
    statements: tuple[str, ...]


def applied(db: Database) -> list[str]:
    exists = db.execute(db.dialect.table_exists, ("schema_migrations",)).fetchone()
    if exists is None:
        return []
    return [row[0] for row in db.execute(db.dialect.applied_migrations)]


def pending(db: Database, migrations: Sequence[Migration]) -> list[Migration]:
    done = set(applied(db))
    return [m for m in migrations if m.name not in done]


def migrate(db: Database, migrations: Sequence[Migration]) -> list[str]:
    """Apply what is pending, in order, in one transaction; return the names applied."""
    _check_unique(migrations)
    db.execute(_LEDGER)
    names = []
    with db.atomic() as conn:
        # Read inside the write lock: another process may have just applied some.
        done = {row[0] for row in conn.execute(db.dialect.applied_migrations)}
        for migration in migrations:
            if migration.name in done:
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, datetime.now(UTC).isoformat()),
            )
            names.append(migration.name)
    return names


def require_current(db: Database, migrations: Sequence[Migration]) -> None:
    """For read-only opens: refuse a file whose schema is older than the code."""
    missing = [m.name for m in pending(db, migrations)]
    if missing:
        raise SchemaError(
            f"database {db.path} is missing migrations {', '.join(missing)}; open it once in FULL to migrate"
        )


def _check_unique(migrations: Sequence[Migration]) -> None:
    names = [m.name for m in migrations]
    if len(names) != len(set(names)):
        raise StorageError(f"migration names must be unique: {names}")
