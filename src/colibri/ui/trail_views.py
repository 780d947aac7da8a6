"""What the trail's pages show: the sessions with each one's integrity, and one session's records
with the state of the chain over them, its seal and the checkpoints (SPEC §13, §14)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.database import Connection, Database
from colibri.domains.log.note import Verifier
from colibri.domains.proofs import repository as proofs
from colibri.domains.trail import repository as trail
from colibri.domains.trail.repository import StoredRecord
from colibri.ui.checkpoints import key_id, recorded_verifier, session_checkpoints
from colibri.ui.integrity import CHECKS, INLINE_SPAN, Integrity, check_now
from colibri.ui.marks import RecordMark, record_marks, store_pass
from colibri.ui.overview import session_state

PAGE = 50


def session_cursor(session: proofs.Session) -> str:
    """The opaque position after `session` in the newest-first list of sessions."""
    text = json.dumps([session.started_at, session.session_id], ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def after_cursor(cursor: str | None) -> tuple[str, str] | None:
    """The position a cursor of `session_cursor` names; ValueError for anything else."""
    if cursor is None:
        return None
    try:
        started_at, session_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(started_at, str) and isinstance(session_id, str):
            return started_at, session_id
    except (ValueError, TypeError):  # not base64, not JSON, not a pair
        pass
    raise ValueError(f"before={cursor[:40]!r} is not a position from this page's links; follow them instead")


def sessions_page(db: Database, before: tuple[str, str] | None) -> dict[str, Any]:
    """A page of audit sessions, newest first, each with whether it is sealed and intact.

    The integrity comes from one pass over the whole chain (overview.py): made now on a store of
    up to INLINE_SPAN records, else the latest background pass, with its age."""
    with db.snapshot() as conn:
        rows = proofs.list_sessions(conn, before=before, limit=PAGE + 1)
        more = len(rows) > PAGE
        sessions = rows[:PAGE]
        spans = {s.session_id: trail.session_seq_range(conn, s.session_id) for s in sessions}
        known, error = store_pass(db, conn, [s for s in sessions if s.seal is not None])
    states = {s.session_id: session_state(known, s, spans[s.session_id]) for s in sessions}
    return {
        "sessions": sessions,
        "states": states,
        "check_error": error,
        "before": session_cursor(sessions[-1]) if more else None,
    }


def session_page(
    db: Database, session_id: str, kind: str | None, after: str | None, verifier: Verifier | None = None
) -> dict[str, Any] | None:
    """The session, a page of its records, and the state of the chain over its records and of its seal.

    The chain is checked over the seq range the session spans (the records of other sessions
    inside it too, as they link it together; see `integrity`); the whole store is `colibri
    verify`'s work."""
    with db.snapshot() as conn:
        session = proofs.get_session(conn, session_id)
        if session is None:
            return None
        after_seq = 0 if after is None else decode_cursor(after)
        records = trail.list_records(
            conn, session_id=session_id, task_id=None, kind=kind, after_seq=after_seq, limit=PAGE + 1
        )
        span = trail.session_seq_range(conn, session_id)
        if span is None:
            integrity = None
        elif span[1] - span[0] < INLINE_SPAN:
            integrity = check_now(db, session, span)
        else:
            integrity = CHECKS.status(db.target, session, span)
        marks = _session_marks(db, conn, records[:PAGE], integrity)
        given = verifier is not None
        verifier = verifier or recorded_verifier(conn)
        checkpoints = session_checkpoints(conn, session_id, verifier)
    more = len(records) > PAGE
    records = records[:PAGE]
    return {
        "session": session,
        "records": records,
        "marks": marks,
        "kind": kind,
        "span": span,
        "integrity": integrity,
        "checkpoints": checkpoints,
        "verifier_key": None if verifier is None else verifier.key(),
        "verifier_id": key_id(verifier),
        "verifier_given": given,
        "next_cursor": encode_cursor(records[-1].seq) if more else None,
    }


def _session_marks(
    db: Database, conn: Connection, records: list[StoredRecord], integrity: Integrity | None
) -> dict[int, RecordMark]:
    """The marks of the session's records shown: the store pass's (as on a task's page), and
    what this page's own check of the session's span found, which may be newer."""
    marks = record_marks(db, conn, records)
    if integrity is None or integrity.chain is None:
        return marks
    first = integrity.chain.first_break
    if first is None and (integrity.seal is None or integrity.seal.valid):
        return marks
    detail = (
        "its seal no longer matches its records" if first is None else f"at seq {first.seq} ({first.reason})"
    )
    return {
        seq: replace(
            mark,
            state="broken",
            detail=mark.detail if mark.state == "broken" else detail,
            at_break=mark.at_break or (first.reason if first is not None and first.seq == seq else None),
        )
        for seq, mark in marks.items()
    }
