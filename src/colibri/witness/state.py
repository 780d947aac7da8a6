"""The witness's own SQLite file: the latest checkpoint it cosigned for each log origin."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from colibri.core.clock import utc_now
from colibri.core.database import Connection, Database
from colibri.storage import Migration, SQLiteDatabase
from colibri.storage.migrations import migrate

MIGRATIONS = [
    Migration(
        "0001_witness_checkpoints",
        (
            """CREATE TABLE witness_checkpoints (
                origin TEXT PRIMARY KEY,
                size INTEGER NOT NULL,
                root BLOB NOT NULL,
                note TEXT NOT NULL,
                updated_at TEXT NOT NULL
            )""",
        ),
    )
]


@dataclass(frozen=True, slots=True)
class Cosigned:
    """The latest checkpoint cosigned for one origin: its size and root, and the note as served to
    monitors (the log's signatures this witness verified, and its own cosignature)."""

    size: int
    root: bytes
    note: str


def open_state(path: Path) -> Database:
    """The witness's file, created and migrated as needed (StorageError when it cannot be)."""
    db = SQLiteDatabase.open(path)
    try:
        migrate(db, MIGRATIONS)
    except BaseException:
        db.close()
        raise
    return db


def cosigned(conn: Connection, origin: str) -> Cosigned | None:
    row = conn.execute(
        "SELECT size, root, note FROM witness_checkpoints WHERE origin = ?", (origin,)
    ).fetchone()
    return None if row is None else Cosigned(int(row[0]), bytes(row[1]), str(row[2]))


def keep(conn: Connection, origin: str, checkpoint: Cosigned) -> None:
    conn.execute(
        "INSERT INTO witness_checkpoints (origin, size, root, note, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root,"
        " note = excluded.note, updated_at = excluded.updated_at",
        (origin, checkpoint.size, checkpoint.root, checkpoint.note, utc_now()),
    )
