"""The chain and seal status the trail page shows, for sessions of any size.

A session's records are linked into the one chain through the records of every session
written meanwhile, so checking a session means scanning the seq span it covers, which under
concurrent agents may be the whole store. Spans up to INLINE_SPAN are checked while the page
is made (tens of milliseconds); longer ones in a background thread over a connection of its
own, the page showing the latest result and its age, rechecked once it is MAX_AGE_S old.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.domains.proofs.repository import Session
from colibri.domains.proofs.seals import SealCheck, check_seal
from colibri.domains.trail.verify import Report, verify
from colibri.storage import open_database

INLINE_SPAN = 20_000
MAX_AGE_S = 10.0


@dataclass(frozen=True, slots=True)
class Integrity:
    """What is known of a session: `chain` None while its first check is still running."""

    chain: Report | None
    seal: SealCheck | None
    checked_at: float | None
    error: str | None = None

    @property
    def age_s(self) -> float | None:
        return None if self.checked_at is None else time.time() - self.checked_at


def check_now(db: Database, session: Session, span: tuple[int, int]) -> Integrity:
    """Chain over the span and the seal recomputed, in one snapshot (the caller's, if open)."""
    with db.snapshot() as conn:
        report = verify(db, from_seq=span[0], to_seq=span[1])
        seal = None if session.seal is None else check_seal(conn, session.session_id, session.seal)
    return Integrity(report, seal, time.time())


class BackgroundChecks:
    """Results of long checks by (store, session), refreshed in the background."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: dict[tuple[str, str], Integrity] = {}
        self._running: set[tuple[str, str]] = set()

    def status(self, target: str, session: Session, span: tuple[int, int]) -> Integrity:
        key = (target, session.session_id)
        with self._lock:
            known = self._results.get(key)
            stale = known is None or (known.age_s or 0.0) >= MAX_AGE_S
            if stale and key not in self._running:
                self._running.add(key)
                threading.Thread(target=self._check, args=(key, session, span), daemon=True).start()
        return known or Integrity(None, None, None)

    def _check(self, key: tuple[str, str], session: Session, span: tuple[int, int]) -> None:
        result = Integrity(None, None, time.time(), error="the check stopped unexpectedly")
        try:
            db = open_database(key[0], readonly=True)
            try:
                result = check_now(db, session, span)
            finally:
                db.close()
        except StorageError as exc:
            result = Integrity(None, None, time.time(), error=str(exc))
        finally:
            with self._lock:
                self._results[key] = result
                self._running.discard(key)


CHECKS = BackgroundChecks()
