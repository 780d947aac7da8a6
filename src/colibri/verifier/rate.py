"""The rate a verification report shows, when the run was long enough for it to mean something."""

from __future__ import annotations

# A rate is shown for a run of at least this long over at least this many items: below either,
# the fixed costs (starting the workers, opening the file) are most of the time, and the rate of a
# few hundred records checked in 0.05 s says nothing about the checker.
RATE_MIN_SECONDS = 1.0
RATE_MIN_ITEMS = 10_000


def rate(items: int, seconds: float, unit: str) -> str:
    """`, 312,000 records/s` after the time, or nothing for a run too short to mean it."""
    if seconds < RATE_MIN_SECONDS or items < RATE_MIN_ITEMS:
        return ""
    return f", {items / seconds:,.0f} {unit}/s"
