"""Helpers for the trail and proof tests: tasks, sessions and chains written straight to a file."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from colibri.core.clock import utc_now
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.domains.trail.canonical import GENESIS_HASH, record_hash
from colibri.storage import Database

KINDS = ("plan", "analysis", "decision", "observation", "reflection", "writeback")


def insert_task(target: Database | Path, task_id: str) -> None:
    """A minimal row in the task pipeline's table (the trail only needs the id to exist)."""
    sql = (
        "INSERT INTO tasks (id, title, status, priority, created_at, updated_at)"
        " VALUES (?, 'a task', 'todo', 'medium', ?, ?)"
    )
    if not isinstance(target, Path):
        target.execute(sql, (task_id, utc_now(), utc_now()))
        return
    conn = sqlite3.connect(target, timeout=10)
    try:
        with conn:
            conn.execute(sql, (task_id, utc_now(), utc_now()))
    finally:
        conn.close()


def build_chain(db: Database, count: int, session_count: int = 3, *, seal: int = 0) -> list[str]:
    """`count` records spread round-robin over new sessions; the first `seal` sessions sealed."""
    ids = [sessions.start(db, None, "tester").session_id for _ in range(session_count)]
    for i in range(count):
        records.append(db, ids[i % session_count], KINDS[i % len(KINDS)], f'thought {i}: é "q" \\ 😀\n')
    for session_id in ids[:seal]:
        sessions.finalize(db, session_id)
    return ids


class RawPostgres:
    """A driver connection to a PostgreSQL store with foreign keys off, shaped like sqlite3's."""

    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)
        # The replica role skips the foreign-key triggers, as PRAGMA foreign_keys = OFF does.
        self._conn.execute("SET session_replication_role = replica")

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        from colibri.storage.postgres.rows import translate

        if isinstance(params, Mapping):  # sqlite3's :name placeholders
            return self._conn.execute(re.sub(r":(\w+)", r"%(\1)s", sql), params)
        return self._conn.execute(translate(sql), params or None)

    def close(self) -> None:
        self._conn.close()


def raw_connection(target: Path | Database) -> Any:
    """A connection that bypasses Colibri entirely, as an attacker editing the store would."""
    url = getattr(target, "url", None)
    if isinstance(url, str):
        return RawPostgres(url)
    path = target if isinstance(target, Path) else target.path
    conn = sqlite3.connect(path, isolation_level=None, timeout=10)
    conn.execute("PRAGMA foreign_keys = OFF")
    return conn


def bulk_chain(db: Database, count: int, session_id: str = "bulk") -> None:
    """`count` valid records in one session, written in bulk (what a long-lived trail looks like)."""
    sessions.start(db, session_id)
    prev, created_at, rows = GENESIS_HASH, utc_now(), []
    for seq in range(1, count + 1):
        content = f"bulk thought number {seq}"
        digest = record_hash(
            seq=seq,
            session_id=session_id,
            kind="observation",
            content=content,
            task_id=None,
            agent_id="bulk",
            created_at=created_at,
            prev_hash=prev,
        )
        rows.append((seq, session_id, "observation", content, None, "bulk", created_at, prev, digest))
        prev = digest
    with db.atomic() as conn:
        conn.executemany(
            "INSERT INTO thought_records (seq, session_id, kind, content, task_id, agent_id, created_at,"
            " prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1", (count, prev))
