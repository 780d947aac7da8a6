"""SQL of the log's bookkeeping: the database id, stored checkpoints, adoption of older rows."""

from __future__ import annotations

from dataclasses import dataclass, replace

from colibri.core.database import Connection, Row


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """A signed checkpoint as kept in the database."""

    size: int
    root: bytes
    note: str
    reason: str
    session_id: str | None
    made_at: str
    verifier_key: str | None = None  # the key that signed it; None for rows older than the column
    id: int | None = None  # set once stored


_COLUMNS = "size, root, note, reason, session_id, made_at, {verifier_key}, id"


def _columns(conn: Connection) -> str:
    """The columns to read; a store not yet migrated to 0016 (read-only, by `verify`) has no key column."""
    names = {row[0] for row in conn.execute(conn.dialect.table_columns, ("log_checkpoints",))}
    return _COLUMNS.format(verifier_key="verifier_key" if "verifier_key" in names else "NULL")


def database_id(conn: Connection) -> str:
    row = conn.execute("SELECT database_id FROM log_meta WHERE id = 1").fetchone()
    if row is None:
        raise LookupError("the database has no id (table log_meta is empty); it was altered outside Colibri")
    return str(row[0])


def insert_checkpoint(conn: Connection, checkpoint: StoredCheckpoint) -> StoredCheckpoint:
    """Store `checkpoint`; return it with its id."""
    row = conn.execute(
        "INSERT INTO log_checkpoints (size, root, note, reason, session_id, made_at, verifier_key)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            checkpoint.size,
            checkpoint.root,
            checkpoint.note,
            checkpoint.reason,
            checkpoint.session_id,
            checkpoint.made_at,
            checkpoint.verifier_key,
        ),
    ).fetchone()
    return replace(checkpoint, id=int(row[0]))


def latest_checkpoint(conn: Connection) -> StoredCheckpoint | None:
    row = conn.execute(f"SELECT {_columns(conn)} FROM log_checkpoints ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else _checkpoint(row)


def seal_checkpoint(conn: Connection, session_id: str) -> StoredCheckpoint | None:
    """The checkpoint made when the session was sealed (None for seals older than the log)."""
    row = conn.execute(
        f"SELECT {_columns(conn)} FROM log_checkpoints WHERE session_id = ? ORDER BY id LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else _checkpoint(row)


def all_checkpoints(conn: Connection) -> list[StoredCheckpoint]:
    return [
        _checkpoint(row) for row in conn.execute(f"SELECT {_columns(conn)} FROM log_checkpoints ORDER BY id")
    ]


def _checkpoint(row: Row) -> StoredCheckpoint:
    return StoredCheckpoint(
        size=int(row[0]),
        root=bytes(row[1]),
        note=str(row[2]),
        reason=str(row[3]),
        session_id=None if row[4] is None else str(row[4]),
        made_at=str(row[5]),
        verifier_key=None if row[6] is None else str(row[6]),
        id=int(row[7]),
    )
