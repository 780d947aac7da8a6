"""SQL of witnesses' cosignatures on stored checkpoints, and of each witness's last submission."""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection


def add_cosignature(
    conn: Connection, checkpoint_id: int, witness_key: str, line: str, timestamp: int
) -> None:
    """Keep a verified cosignature line (its newline included); a second one from the witness is ignored."""
    conn.execute(
        "INSERT INTO log_cosignatures (checkpoint_id, witness_key, line, cosigned_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (checkpoint_id, witness_key) DO NOTHING",
        (checkpoint_id, witness_key, line, timestamp),
    )


def cosignature_lines(conn: Connection, checkpoint_id: int) -> list[str]:
    rows = conn.execute(
        "SELECT line FROM log_cosignatures WHERE checkpoint_id = ? ORDER BY witness_key", (checkpoint_id,)
    )
    return [str(row[0]) for row in rows]


def with_cosignatures(note: str, lines: list[str]) -> str:
    """The signed note with the cosignature lines after the log's own signatures."""
    return note + "".join(lines)


def cosigned_size(conn: Connection, witness_key: str) -> int | None:
    """The size of the largest stored checkpoint the witness cosigned, or None."""
    row = conn.execute(
        "SELECT max(c.size) FROM log_cosignatures s JOIN log_checkpoints c ON c.id = s.checkpoint_id"
        " WHERE s.witness_key = ?",
        (witness_key,),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def record_attempt(  # noqa: PLR0917 - one row's columns
    conn: Connection, witness_key: str, name: str, url: str | None, at: str, error: str | None
) -> None:
    conn.execute(
        "INSERT INTO log_witnesses (witness_key, name, url, last_attempt_at, last_error)"
        " VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (witness_key) DO UPDATE SET name = excluded.name, url = excluded.url,"
        " last_attempt_at = excluded.last_attempt_at, last_error = excluded.last_error",
        (witness_key, name, url, at, error),
    )


@dataclass(frozen=True, slots=True)
class WitnessStatus:
    """What the store knows of one witness: its last cosigned size and its last attempt."""

    witness_key: str
    name: str
    url: str | None
    cosigned_size: int | None
    cosigned_at: int | None
    last_attempt_at: str | None
    last_error: str | None


def witness_status(conn: Connection) -> list[WitnessStatus]:
    """Every witness that was ever submitted to or cosigned, by name."""
    rows = conn.execute(
        "SELECT w.witness_key, w.name, w.url, w.last_attempt_at, w.last_error,"
        " (SELECT max(c.size) FROM log_cosignatures s JOIN log_checkpoints c ON c.id = s.checkpoint_id"
        "   WHERE s.witness_key = w.witness_key),"
        " (SELECT max(s.cosigned_at) FROM log_cosignatures s WHERE s.witness_key = w.witness_key)"
        " FROM log_witnesses w ORDER BY w.name"
    )
    return [
        WitnessStatus(
            str(r[0]),
            str(r[1]),
            None if r[2] is None else str(r[2]),
            None if r[5] is None else int(r[5]),
            None if r[6] is None else int(r[6]),
            None if r[3] is None else str(r[3]),
            None if r[4] is None else str(r[4]),
        )
        for r in rows
    ]
