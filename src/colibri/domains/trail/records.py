"""ζ decision trail rules: append a record to the hash chain, list records page by page.

Refusals are `DomainError`s; the tools carry them as Pattern A envelopes whose code is the
refusal's (`SESSION_NOT_FOUND`, ...), each message starting with the offending id.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from colibri.core.callers import LOCAL_PRINCIPAL
from colibri.core.clock import utc_now
from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.errors import DomainError
from colibri.domains.log import api as log
from colibri.domains.proofs import api as sessions
from colibri.domains.tasks import api as tasks
from colibri.domains.trail import repository
from colibri.domains.trail.canonical import record_hash, record_id_for
from colibri.domains.trail.models import FIRST_PAGE
from colibri.domains.trail.repository import StoredRecord
from colibri.storage import Connection, Database


def append(
    db: Database,
    session_id: str,
    kind: str,
    content: str,
    *,
    task_id: str | None = None,
    agent_id: str | None = None,
    principal: str = LOCAL_PRINCIPAL,
) -> StoredRecord:
    """Chain a new record after the current head, in one write transaction.

    `seq` and `prev_hash` are read inside BEGIN IMMEDIATE, so writers in other processes wait
    for the lock and every record links to the one committed just before it. The record's
    log entry is appended in the same transaction.
    """
    # In a batch of pipelined calls the database checks the session and task at the insert
    # (0037) instead of a read per call; a refusal there fails the batch, and the chain runs it
    # again carefully, where these reads give each call its own error.
    checked_at_insert = db.in_transaction and db.errors_deferred
    with _write_transaction(db) as conn:
        # Asked first, read after the checks: on PostgreSQL all of it is one round trip.
        log.prepare_append(conn)
        pending_head = repository.head_reader(conn)
        if not checked_at_insert:
            require_session(conn, session_id, open_only=True)
            if task_id is not None:
                require_task(conn, task_id)
        head = pending_head()
        seq, created_at = head.seq + 1, utc_now()
        digest = record_hash(
            seq=seq,
            session_id=session_id,
            kind=kind,
            content=content,
            task_id=task_id,
            agent_id=agent_id,
            created_at=created_at,
            prev_hash=head.hash,
        )
        record = StoredRecord(
            record_id=record_id_for(digest),
            seq=seq,
            session_id=session_id,
            kind=kind,
            content=content,
            task_id=task_id,
            agent_id=agent_id,
            created_at=created_at,
            prev_hash=head.hash,
            hash=digest,
            principal=principal,
        )
        repository.append(conn, record)
        log.log_record(conn, seq, digest)
    return record


@contextmanager
def _write_transaction(db: Database) -> Iterator[Connection]:
    """The transaction the chain opened around this write tool (BEGIN IMMEDIATE), or a new one.

    Reusing it spares a savepoint on the hottest write path; called on its own (tests, scripts)
    the append still gets its own BEGIN IMMEDIATE.
    """
    if db.in_transaction:
        yield db
    else:
        with db.atomic() as conn:
            yield conn


def page(
    conn: Connection,
    *,
    session_id: str | None = None,
    task_id: str | None = None,
    kind: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> tuple[list[StoredRecord], str | None]:
    """One page of matching records, oldest first, and the cursor of the next page (or None)."""
    if session_id is not None:
        require_session(conn, session_id, open_only=False)
    if task_id is not None:
        require_task(conn, task_id)
    after = 0 if cursor is None else decode_cursor(cursor, first_page=FIRST_PAGE)
    rows = repository.list_records(
        conn, session_id=session_id, task_id=task_id, kind=kind, after_seq=after, limit=limit + 1
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, encode_cursor(rows[-1].seq) if more else None


def require_session(conn: Connection, session_id: str, *, open_only: bool) -> sessions.Session:
    """The session, or SESSION_NOT_FOUND; with `open_only`, SESSION_FINALIZED once it is sealed."""
    session = sessions.get_session(conn, session_id)
    if session is None:
        raise DomainError(
            "SESSION_NOT_FOUND",
            f"{session_id} is not an audit session; start one with audit_session_start and pass the "
            "session_id it returns",
            session_id=session_id,
        )
    if open_only and session.seal is not None:
        raise DomainError(
            "SESSION_FINALIZED",
            f"{session_id} was sealed by merkle_finalize at {session.seal.finalized_at} and takes no "
            "more records; start a new session with audit_session_start",
            session_id=session_id,
        )
    return session


def require_task(conn: Connection, task_id: str) -> None:
    """TASK_NOT_FOUND unless the task pipeline has a task with this id."""
    if not tasks.task_exists(conn, task_id):
        raise DomainError(
            "TASK_NOT_FOUND",
            f"{task_id} is not an existing task; use task_list to find the id, create the task with "
            "task_create, or leave task_id out",
            task_id=task_id,
        )
