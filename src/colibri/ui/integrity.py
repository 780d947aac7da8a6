"""The chain and seal status the trail page shows, for sessions of any size.

A session's records are linked into the one chain through the records of every session
written meanwhile, so checking a session means scanning the seq span it covers, which under
concurrent agents may be the whole store. Spans up to INLINE_SPAN are checked while the page
is made (tens of milliseconds); longer ones in the background worker process (checker.py) over
a connection of its own, the page showing the latest result and its age, rechecked once it is
MAX_AGE_S old but never sooner than five times the last check's length after it, so that
checking takes at most a fifth of a core however long the span.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.domains.proofs.repository import Session
from colibri.domains.proofs.seals import SealCheck, check_seal
from colibri.domains.trail.verify import Report, verify
from colibri.storage import open_database
from colibri.ui.checker import CHECKER

INLINE_SPAN = 20_000
MAX_AGE_S = 10.0


@dataclass(frozen=True, slots=True)
class Integrity:
    """What is known of a session: `chain` None while its first check is still running."""

    chain: Report | None
    seal: SealCheck | None
    checked_at: float | None
    error: str | None = None
    took_s: float = 0.0

    @property
    def age_s(self) -> float | None:
        return None if self.checked_at is None else time.time() - self.checked_at

    def stale(self) -> bool:
        return self.checked_at is None or time.time() - self.checked_at >= max(MAX_AGE_S, 5 * self.took_s)


def check_now(db: Database, session: Session, span: tuple[int, int]) -> Integrity:
    """Chain over the span and the seal recomputed, in one snapshot (the caller's, if open)."""
    started = time.monotonic()
    with db.snapshot() as conn:
        report = verify(db, from_seq=span[0], to_seq=span[1])
        seal = None if session.seal is None else check_seal(conn, session.session_id, session.seal)
    return Integrity(report, seal, time.time(), took_s=time.monotonic() - started)


def check_store(target: str, session: Session, span: tuple[int, int]) -> Integrity:
    """`check_now` over a read-only connection of its own (what the worker process runs)."""
    try:
        db = open_database(target, readonly=True)
        try:
            return check_now(db, session, span)
        finally:
            db.close()
    except StorageError as exc:
        return Integrity(None, None, time.time(), error=str(exc))


class BackgroundChecks:
    """Results of long checks by (store, session), refreshed in the background worker."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: dict[tuple[str, str], Integrity] = {}
        self._running: set[tuple[str, str]] = set()

    def status(self, target: str, session: Session, span: tuple[int, int]) -> Integrity:
        key = (target, session.session_id)
        with self._lock:
            known = self._results.get(key)
            start = (known is None or known.stale()) and key not in self._running
            if start:
                self._running.add(key)
        if start:  # outside the lock: a check done at once calls _keep, which takes it
            try:
                checking = CHECKER.submit(check_store, target, session, span)
            except BrokenProcessPool as exc:
                self._keep(key, _failed(exc))
            else:
                checking.add_done_callback(lambda done: self._keep(key, done))
        return known or Integrity(None, None, None)

    def _keep(self, key: tuple[str, str], done: Future[Integrity]) -> None:
        try:
            result = done.result()
        except (BrokenProcessPool, CancelledError) as exc:  # the worker died or was stopped
            result = Integrity(
                None, None, time.time(), error=f"the check stopped: {exc or type(exc).__name__}"
            )
        with self._lock:
            self._results[key] = result
            self._running.discard(key)


def _failed(exc: BaseException) -> Future[Integrity]:
    failed: Future[Integrity] = Future()
    failed.set_exception(exc)
    return failed


CHECKS = BackgroundChecks()
