"""SQL of the decision trail: the chain's anchor, appends and filtered pages of records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from colibri.domains.trail.canonical import GENESIS_HASH
from colibri.storage import Connection

_COLUMNS = (
    "record_id, seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash, hash, principal"
)


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One thought record with every stored field."""

    record_id: str
    seq: int
    session_id: str
    kind: str
    content: str
    task_id: str | None
    agent_id: str | None
    created_at: str
    prev_hash: str
    hash: str
    principal: str  # who the server proved wrote it; not part of the hash


@dataclass(frozen=True, slots=True)
class Head:
    """The chain's anchor: seq and hash of the last record (0 and the genesis hash when empty)."""

    seq: int
    hash: str


_HEAD = "trail.head"


def read_head(conn: Connection) -> Head:
    """The anchor, for appending; its absence means the file was edited outside Colibri."""
    return head_reader(conn)()


def head_reader(conn: Connection) -> Callable[[], Head]:
    """Ask for the anchor now, read it when called: on PostgreSQL the question travels with the
    caller's reads in between. Within a write transaction the anchor is read once; its memo
    (storage/memo.py) then follows this transaction's own appends."""
    known = conn.memo.get(_HEAD)
    if isinstance(known, Head):
        return lambda: known
    cursor = conn.execute("SELECT seq, hash FROM trail_head WHERE id = 1")
    first = None if conn.dialect.pipelined else cursor.fetchone()  # SQLite: read it to the end now

    def read() -> Head:
        row = cursor.fetchone() if conn.dialect.pipelined else first
        if row is None:
            raise RuntimeError(
                "the chain anchor (table trail_head) has no row, so the database was altered outside "
                "Colibri; check it with `colibri verify`"
            )
        head = Head(seq=int(row[0]), hash=str(row[1]))
        conn.memo[_HEAD] = head
        return head

    return read


def read_head_or_genesis(conn: Connection) -> Head:
    """For verification: a missing anchor reads as an empty chain, so every record is reported."""
    row = conn.execute(f"SELECT seq, {conn.dialect.as_bytes('hash')} FROM trail_head WHERE id = 1").fetchone()
    if row is None:
        return Head(seq=0, hash=GENESIS_HASH)
    return Head(seq=int(row[0]), hash=bytes(row[1]).decode("utf-8", "replace"))


def append(conn: Connection, record: StoredRecord) -> None:
    """Insert the record and move the anchor to it (the caller holds the write transaction)."""
    conn.execute(
        "INSERT INTO thought_records"
        " (seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash, hash, principal)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.seq,
            record.session_id,
            record.kind,
            record.content,
            record.task_id,
            record.agent_id,
            record.created_at,
            record.prev_hash,
            record.hash,
            record.principal,
        ),
    )
    conn.execute("UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1", (record.seq, record.hash))
    conn.memo[_HEAD] = Head(seq=record.seq, hash=record.hash)


def has_writeback(conn: Connection, task_id: str) -> bool:
    """True when at least one thought record (the decision trail) cites the task."""
    row = conn.execute("SELECT 1 FROM thought_records WHERE task_id = ? LIMIT 1", (task_id,)).fetchone()
    return row is not None


def list_records(
    conn: Connection,
    *,
    session_id: str | None,
    task_id: str | None,
    kind: str | None,
    after_seq: int,
    limit: int,
) -> list[StoredRecord]:
    """Up to `limit` records after `after_seq`, oldest first, matching every filter given."""
    clauses: list[str] = ["seq > ?"]
    params: list[object] = [after_seq]
    for column, value in (("session_id", session_id), ("task_id", task_id), ("kind", kind)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM thought_records WHERE {' AND '.join(clauses)} ORDER BY seq LIMIT ?",
        (*params, limit),
    )
    return [StoredRecord(*row) for row in rows]


def session_seq_range(conn: Connection, session_id: str) -> tuple[int, int] | None:
    """The first and last seq of the session's records (two probes of the session index), or None."""
    row = conn.execute(
        "SELECT (SELECT seq FROM thought_records WHERE session_id = ? ORDER BY seq LIMIT 1),"
        " (SELECT seq FROM thought_records WHERE session_id = ? ORDER BY seq DESC LIMIT 1)",
        (session_id, session_id),
    ).fetchone()
    return None if row is None or row[0] is None else (int(row[0]), int(row[1]))


# --- what the proof store reads of the records (through trail.api) ---


@dataclass(frozen=True, slots=True)
class RecordRef:
    """Where a record sits: its seq, its session and its stored hash."""

    seq: int
    session_id: str
    hash: str


def count_records(conn: Connection, session_id: str) -> int:
    """How many records the session holds."""
    row = conn.execute("SELECT count(*) FROM thought_records WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0])


def record_hashes(conn: Connection, session_id: str) -> list[tuple[int, str]]:
    """(seq, stored hash) of every record of the session, in chain order."""
    # plain tuples: sealing 100,000 records reads 100,000 rows
    cursor = conn.tuples(
        "SELECT seq, hash FROM thought_records WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    rows: list[tuple[int, str]] = cursor.fetchall()
    return rows


def record_seqs(conn: Connection, session_id: str) -> list[int]:
    """The seq of every record of the session, in chain order (read from the session index)."""
    cursor = conn.tuples("SELECT seq FROM thought_records WHERE session_id = ? ORDER BY seq", (session_id,))
    return [row[0] for row in cursor]


def stored_hash_bytes(conn: Connection, session_id: str) -> list[bytes]:
    """The stored hash of every record of the session, as bytes, in chain order.

    Read as BLOBs so that a hash altered into text that is not UTF-8 is still returned.
    """
    rows = conn.execute(
        f"SELECT {conn.dialect.as_bytes('hash')} FROM thought_records WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    return [row[0] for row in rows]


def find_record(conn: Connection, record_id: str) -> RecordRef | None:
    """The record with this id (any session), or None."""
    row = conn.execute(
        "SELECT seq, session_id, hash FROM thought_records WHERE record_id = ?", (record_id,)
    ).fetchone()
    return None if row is None else RecordRef(seq=row[0], session_id=row[1], hash=row[2])
