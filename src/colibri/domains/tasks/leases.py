"""Leases (SPEC §24): who holds an in_progress task, until when, and the token fencing its writes.

A lease is taken by moving a task to in_progress, renewed by any update of its holder, moved to
another principal by `take_over` once it has expired, and ended when the task leaves in_progress.
This module holds the arithmetic and the rules that need no database; `service.py` applies them.

Times are the one format of core/clock.py (fixed width, UTC), so comparing two of them as text
compares the instants.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from colibri.domains.tasks import errors
from colibri.domains.tasks.models import Lease

DEFAULT_S = 900
MIN_S = 10
MAX_S = 86_400
RANGE = f"an integer number of seconds from {MIN_S} to {MAX_S:,} (default {DEFAULT_S})"
_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


@dataclass(frozen=True, slots=True)
class Held:
    """A task's lease columns as stored; `holder` is None when nobody holds the task."""

    holder: str | None = None
    expires_at: str | None = None
    seconds: int | None = None
    token: int | None = None

    def live(self, now: str) -> bool:
        return self.holder is not None and self.expires_at is not None and self.expires_at > now

    def shown(self, status: str, now: str) -> Lease | None:
        if status != "in_progress" or self.holder is None or self.expires_at is None:
            return None
        return Lease(
            holder=self.holder,
            expires_at=self.expires_at,
            lease_s=self.seconds or DEFAULT_S,
            token=self.token or 0,
            expired=self.expires_at <= now,
        )


def held(row: Any) -> Held:
    """The lease columns of a row selected with repository's columns."""
    return Held(row["lease_holder"], row["lease_expires_at"], row["lease_s"], row["lease_token"])


def expiry(now: str, seconds: int) -> str:
    return (_instant(now) + timedelta(seconds=seconds)).strftime(_FORMAT)


def span(earlier: str, later: str) -> str:
    """How long from `earlier` to `later`, for a person: '40 s', '4 min', '2 h 5 min', '3 days'."""
    seconds = max(0, int((_instant(later) - _instant(earlier)).total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes // (24 * 60)} days"


def _instant(text: str) -> datetime:
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def check_write(
    task_id: str, lease: Held, principal: str, now: str, *, take_over: bool, in_progress: bool
) -> bool:
    """May `principal` write this task now? True when the write moves the lease to it (take_over);
    raises ERR_LEASED while another principal's lease runs, or when it ended and take_over was not
    asked for, and ERR_NOT_LEASED for a take_over with no lease to take."""
    if lease.holder is None or lease.holder == principal:
        if take_over and lease.holder is None and not in_progress:
            raise errors.not_leased(task_id)
        return take_over and lease.holder is None
    assert lease.expires_at is not None
    if lease.live(now):
        raise errors.leased(task_id, lease.holder, lease.expires_at, span(now, lease.expires_at), ended=False)
    if not take_over:
        raise errors.leased(task_id, lease.holder, lease.expires_at, span(lease.expires_at, now), ended=True)
    return True


def check_token(task_id: str, lease: Held, given: int | None) -> None:
    """A write carrying a lease_token must carry the token of the task's latest lease."""
    if given is not None and given != lease.token:
        raise errors.fenced(task_id, given, lease.token, lease.holder)
