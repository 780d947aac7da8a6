"""SQL of the proof store: sessions and seals.

The records a seal is built from belong to the decision trail; it reads them for the proof
store through `colibri.domains.trail.api`.
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


def list_sessions(conn: Connection, *, before: tuple[str, str] | None, limit: int) -> list[Session]:
    """Up to `limit` sessions, newest first: by start time, then id, a total order both backends
    keep (SQLite's rowid has no PostgreSQL twin). For the next page pass the last session's
    (started_at, session_id) as `before`. The table has one row per session, so the sort is cheap."""
    where, params = ("", ()) if before is None else (" WHERE (s.started_at, s.session_id) < (?, ?)", before)
    rows = conn.execute(
        "SELECT s.session_id, s.agent_id, s.purpose, s.started_at, z.root, z.leaf_count, z.finalized_at"
        f" FROM audit_sessions s LEFT JOIN session_seals z ON z.session_id = s.session_id{where}"
        " ORDER BY s.started_at DESC, s.session_id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    result = []
    for row in rows:
        seal = None if row[4] is None else Seal(root=row[4], leaf_count=row[5], finalized_at=row[6])
        result.append(
            Session(session_id=row[0], agent_id=row[1], purpose=row[2], started_at=row[3], seal=seal)
        )
    return result
