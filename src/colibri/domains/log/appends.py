"""What the trail and the audit writer call: one function per kind of entry.

Each runs inside the caller's write transaction, right after the row it logs is written,
so the row and its entry commit together or not at all.
"""

from __future__ import annotations

from colibri.core.database import Connection
from colibri.domains.log import tree
from colibri.domains.log.entries import LOCAL_PRINCIPAL, action_entry, record_entry


def log_record(conn: Connection, seq: int, record_hash: str) -> int:
    """Append a thought record (its entry is its hash); return the entry's index."""
    return tree.append(conn, tree.RECORD, seq, record_entry(record_hash))


def log_action(  # noqa: PLR0917 - positional in the order the audit row holds them
    conn: Connection,
    sequence_no: int,
    correlation_id: str,
    tool: str,
    arguments: str,
    outcome: str,
    result_sha256: str | None,
    started_at: str,
    duration_ms: float | None,
    principal: str = LOCAL_PRINCIPAL,
) -> int:
    """Append a finished action; return the entry's index."""
    index, _ = append_action(
        conn,
        sequence_no,
        correlation_id,
        tool,
        arguments,
        outcome,
        result_sha256,
        started_at,
        duration_ms,
        principal,
    )
    return index


def append_action(  # noqa: PLR0917 - positional in the order the audit row holds them
    conn: Connection,
    sequence_no: int,
    correlation_id: str,
    tool: str,
    arguments: str,
    outcome: str,
    result_sha256: str | None,
    started_at: str,
    duration_ms: float | None,
    principal: str = LOCAL_PRINCIPAL,
) -> tuple[int, bytes]:
    """Append a finished action; return the entry's index and the entry (what a receipt names)."""
    entry = action_entry(
        sequence_no,
        correlation_id,
        tool,
        principal,
        arguments,
        outcome,
        result_sha256,
        started_at,
        duration_ms,
    )
    return tree.append(conn, tree.ACTION, sequence_no, entry), entry


def adopt_existing(conn: Connection) -> int:
    """Once per database: log the records and finished actions written before the log existed.

    Records go first in seq order, then actions in sequence_no order. Returns how many
    entries were added (0 when adoption already ran). The caller holds the write lock.
    """
    row = conn.execute("SELECT adopted FROM log_meta WHERE id = 1").fetchone()
    if row is None or row[0]:
        return 0
    added = 0
    records = conn.execute("SELECT seq, hash FROM thought_records ORDER BY seq").fetchall()
    for seq, record_hash in records:
        log_record(conn, int(seq), str(record_hash))
        added += 1
    actions = conn.execute(
        "SELECT sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms,"
        " principal FROM actions WHERE outcome != 'running' ORDER BY sequence_no"
    ).fetchall()
    for action in actions:
        log_action(conn, *action)
        added += 1
    conn.execute("UPDATE log_meta SET adopted = 1 WHERE id = 1")
    return added
