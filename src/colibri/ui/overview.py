"""The integrity column of the /trail overview: one pass over the whole chain serves every session.

Every session's records are linked through the one chain, so a session is intact when the chain
has no break within the seqs it spans (as its own page checks) and its seal, if it has one,
still matches its stored hashes. Checking each session of a page over its own span would scan
the same records once per session (under concurrent agents every span is most of the store), so
the overview scans the chain once, keeping where each break is, and places every session's
first break from that. Stores up to INLINE_SPAN records are checked while the page is made;
larger ones in the background worker process (checker.py), the page showing the latest pass
and its age.
A pass is repeated once it is MAX_AGE_S old, but never sooner than five times its own length
after it, so that checking takes at most a fifth of a core however large the store.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace

from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.domains.proofs.repository import Session
from colibri.domains.proofs.seals import SealCheck, check_seal
from colibri.domains.trail.repository import read_head_or_genesis
from colibri.domains.trail.scan import Break, scan_range
from colibri.domains.trail.verify import check_anchor
from colibri.storage import open_database
from colibri.ui.checker import CHECKER
from colibri.ui.integrity import MAX_AGE_S

KEEP_BREAKS = 10_000  # breaks placed by one pass; beyond them a pass says only that there were more


@dataclass(frozen=True, slots=True)
class ChainPass:
    """Where the chain was broken, seq 1 to `head_seq`, when it was checked."""

    head_seq: int
    breaks: tuple[Break, ...]  # by seq; all of them unless `more_after` is set
    more_after: int | None  # breaks beyond this seq were not kept
    checked_at: float
    took_s: float
    seals: dict[str, SealCheck] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SessionState:
    """What the overview says of one session."""

    state: str  # verified, broken, unchecked, empty
    detail: str
    age_s: float | None = None


def chain_pass(conn: Connection, sealed: list[Session]) -> ChainPass:
    """Scan the whole chain and recheck the seals of `sealed`, in the caller's snapshot."""
    started = time.monotonic()
    head = read_head_or_genesis(conn)
    result = scan_range(conn, 1, head.seq, keep=KEEP_BREAKS)
    check_anchor(conn, head, result)
    seals = check_seals(conn, sealed)
    breaks = tuple(sorted(result.found, key=lambda found: found.seq))
    more = breaks[-1].seq if result.breaks > len(breaks) else None
    return ChainPass(head.seq, breaks, more, time.time(), time.monotonic() - started, seals)


def check_seals(conn: Connection, sealed: list[Session]) -> dict[str, SealCheck]:
    return {s.session_id: check_seal(conn, s.session_id, s.seal) for s in sealed if s.seal is not None}


def session_state(known: ChainPass | None, session: Session, span: tuple[int, int] | None) -> SessionState:
    """The session's integrity as `known` (None: no pass has finished yet) tells it."""
    if span is None:
        return SessionState("empty", "no records yet")
    if known is None:
        return SessionState("unchecked", "the first check is running")
    age = time.time() - known.checked_at
    first = next((found for found in known.breaks if span[0] <= found.seq <= span[1]), None)
    if first is not None:
        return SessionState("broken", f"at seq {first.seq} ({first.reason})", age)
    if known.more_after is not None and span[1] > known.more_after:
        return SessionState(
            "unchecked", f"more than {KEEP_BREAKS:,} breaks before seq {known.more_after}", age
        )
    if span[1] > known.head_seq:
        return SessionState("unchecked", f"records after seq {known.head_seq} come in the next check", age)
    if session.seal is None:
        return SessionState("verified", "chain intact; open (not sealed)", age)
    seal = known.seals.get(session.session_id)
    if seal is None:
        return SessionState("unchecked", "its seal comes in the next check", age)
    if not seal.valid:
        return SessionState("broken", "its seal no longer matches its records", age)
    return SessionState("verified", "chain intact; seal matches", age)


def run_pass(target: str, sealed: list[Session], rescan: bool) -> ChainPass | dict[str, SealCheck] | str:
    """What the worker process runs: a whole pass (`rescan`) or the seals of `sealed` alone,
    over a read-only connection of its own; the error's text when the store cannot be read."""
    try:
        db: Database = open_database(target, readonly=True)
        try:
            with db.snapshot() as conn:
                return chain_pass(conn, sealed) if rescan else check_seals(conn, sealed)
        finally:
            db.close()
    except StorageError as exc:
        return str(exc)


class StoreChecks:
    """The latest pass over each store, refreshed in the background worker (checker.py). A pass
    rechecks the seals of the sealed sessions pages asked about (the latest ASKED of them); a
    session asked about between passes has its seal checked alone, without a rescan."""

    ASKED = 500

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._passes: dict[str, ChainPass] = {}
        self._errors: dict[str, str] = {}
        self._asked: dict[str, dict[str, Session]] = {}
        self._running: set[str] = set()

    def latest(self, target: str, sealed: list[Session]) -> tuple[ChainPass | None, str | None]:
        """The latest pass over `target` and the error of the last attempt, if it failed; starts
        another pass when this one is stale, or a check of the seals asked for that it lacks."""
        with self._lock:
            asked = self._asked.setdefault(target, {})
            for session in sealed:
                asked.pop(session.session_id, None)
                asked[session.session_id] = session
            for stale_id in list(asked)[: max(len(asked) - self.ASKED, 0)]:
                del asked[stale_id]
            known = self._passes.get(target)
            stale = known is None or time.time() - known.checked_at >= max(MAX_AGE_S, 5 * known.took_s)
            lacking = [s for s in sealed if known is not None and s.session_id not in known.seals]
            start = (stale or lacking) and target not in self._running
            if start:
                self._running.add(target)
            work = list(asked.values()) if stale else lacking
            error = self._errors.get(target)
        if start:  # outside the lock: a check done at once calls _keep, which takes it
            try:
                checking = CHECKER.submit(run_pass, target, work, stale)
            except BrokenProcessPool as exc:
                self._keep(target, _failed(exc))
            else:
                checking.add_done_callback(lambda done: self._keep(target, done))
        return known, error

    def _keep(self, target: str, done: Future[ChainPass | dict[str, SealCheck] | str]) -> None:
        try:
            result = done.result()
        except (BrokenProcessPool, CancelledError) as exc:  # the worker died or was stopped
            result = f"the check stopped: {exc or type(exc).__name__}"
        with self._lock:
            self._running.discard(target)
            known = self._passes.get(target)
            if isinstance(result, str):
                self._errors[target] = result
                return
            self._errors.pop(target, None)
            if isinstance(result, ChainPass):
                self._passes[target] = result
            elif known is not None:
                self._passes[target] = replace(known, seals={**known.seals, **result})


def _failed(exc: BaseException) -> Future[ChainPass | dict[str, SealCheck] | str]:
    failed: Future[ChainPass | dict[str, SealCheck] | str] = Future()
    failed.set_exception(exc)
    return failed


STORE_CHECKS = StoreChecks()
