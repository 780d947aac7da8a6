"""SQL of the proof store: sessions, seals, and the record hashes a seal is built from.

The records themselves belong to the decision trail (`thought_records`); this module only
reads their seq, session and hash.
"""

from __future__ import annotations

from dataclasses import dataclass

from colibri.storage import Connection


@dataclass(frozen=True, slots=True)
class Seal:
    """A session's sealed Merkle root."""

    root: str
    leaf_count: int
    finalized_at: str


@dataclass(frozen=True, slots=True)
class Session:
    """An audit session; `seal` is None while it is open."""

    session_id: str
    agent_id: str | None
    purpose: str | None
    started_at: str
    seal: Seal | None

    @property
    def sealed(self) -> bool:
        return self.seal is not None


@dataclass(frozen=True, slots=True)
class RecordRef:
    """Where a record sits: its seq, its session and its stored hash."""

    seq: int
    session_id: str
    hash: str


def get_session(conn: Connection, session_id: str) -> Session | None:
    """The session with its seal, or None when there is no such session."""
    row = conn.execute(
        "SELECT s.session_id, s.agent_id, s.purpose, s.started_at, z.root, z.leaf_count, z.finalized_at"
        " FROM audit_sessions s LEFT JOIN session_seals z ON z.session_id = s.session_id"
        " WHERE s.session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    seal = None if row[4] is None else Seal(root=row[4], leaf_count=row[5], finalized_at=row[6])
    return Session(session_id=row[0], agent_id=row[1], purpose=row[2], started_at=row[3], seal=seal)


def insert_session(
    conn: Connection, session_id: str, agent_id: str | None, purpose: str | None, started_at: str
) -> bool:
    """Create the session; False when the id is taken (nothing is written then)."""
    cursor = conn.execute(
        "INSERT INTO audit_sessions (session_id, agent_id, purpose, started_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id) DO NOTHING",
        (session_id, agent_id, purpose, started_at),
    )
    return cursor.rowcount == 1


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


def insert_seal(conn: Connection, session_id: str, seal: Seal) -> None:
    """Record the session's seal; from now on it is finalized."""
    conn.execute(
        "INSERT INTO session_seals (session_id, root, leaf_count, finalized_at) VALUES (?, ?, ?, ?)",
        (session_id, seal.root, seal.leaf_count, seal.finalized_at),
    )


def sealed_sessions(conn: Connection) -> dict[str, Seal]:
    """Every sealed session's seal, by session id."""
    rows = conn.execute("SELECT session_id, root, leaf_count, finalized_at FROM session_seals")
    return {row[0]: Seal(root=row[1], leaf_count=row[2], finalized_at=row[3]) for row in rows}


def find_record(conn: Connection, record_id: str) -> RecordRef | None:
    """The record with this id (any session), or None."""
    row = conn.execute(
        "SELECT seq, session_id, hash FROM thought_records WHERE record_id = ?", (record_id,)
    ).fetchone()
    return None if row is None else RecordRef(seq=row[0], session_id=row[1], hash=row[2])
