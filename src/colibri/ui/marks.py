"""What the pages say beside each thought record: whether its session is BROKEN, and whether the
chain breaks at the record itself.

A record is shown on its session's page and on the page of every task it cites; a tampered
record must carry the warning in both places, not only on /trail. The breaks come from the one
pass over the whole chain that /trail uses (overview.py): made while the page is made on a store
of up to INLINE_SPAN records, else the latest background pass. A session's state is the
overview's (`session_state`), so every page says the same of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from colibri.core.database import Connection, Database
from colibri.domains.proofs import repository as proofs
from colibri.domains.trail import repository as trail
from colibri.domains.trail.repository import StoredRecord
from colibri.ui.integrity import INLINE_SPAN
from colibri.ui.overview import STORE_CHECKS, ChainPass, SessionState, chain_pass, session_state


@dataclass(frozen=True, slots=True)
class RecordMark:
    """What is shown beside one record: its session's state, and the break at it, if any."""

    state: str  # the session's: verified, broken, unchecked, empty
    detail: str
    at_break: str | None = None  # the reason the chain breaks at this very record


def store_pass(
    db: Database, conn: Connection, sealed: list[proofs.Session]
) -> tuple[ChainPass | None, str | None]:
    """The pass over the whole chain, with the seals of `sealed` rechecked: made now on a small
    store, else the latest background one (None until it is done) and the last attempt's error."""
    if trail.read_head_or_genesis(conn).seq <= INLINE_SPAN:
        return chain_pass(conn, sealed), None
    return STORE_CHECKS.latest(db.target, sealed)


def record_marks(db: Database, conn: Connection, records: Sequence[StoredRecord]) -> dict[int, RecordMark]:
    """The mark of each record by seq (in the caller's snapshot)."""
    sessions = {sid: proofs.get_session(conn, sid) for sid in {record.session_id for record in records}}
    known = [session for session in sessions.values() if session is not None]
    known_pass, _ = store_pass(db, conn, [session for session in known if session.seal is not None])
    states = {
        s.session_id: session_state(known_pass, s, trail.session_seq_range(conn, s.session_id)) for s in known
    }
    breaks = break_reasons(known_pass, (record.seq for record in records))
    return {record.seq: _mark(states.get(record.session_id), breaks.get(record.seq)) for record in records}


def break_reasons(known: ChainPass | None, seqs: Iterable[int]) -> dict[int, str]:
    """The reason of each break the pass found at one of `seqs`."""
    if known is None:
        return {}
    wanted = set(seqs)
    return {found.seq: found.reason for found in known.breaks if found.seq in wanted}


def _mark(state: SessionState | None, at_break: str | None) -> RecordMark:
    if state is None:  # a record whose session row is gone: only a hand-edited store has one
        return RecordMark("broken", "its session is missing from the store", at_break)
    if at_break is not None:  # the pass saw it even if the session's state says otherwise
        return RecordMark("broken", state.detail, at_break)
    return RecordMark(state.state, state.detail)
