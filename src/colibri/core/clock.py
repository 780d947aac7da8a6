"""Wall-clock timestamps, one format everywhere: ISO 8601 UTC with microseconds and a `Z`."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    # The fields formatted directly: the text strftime("%Y-%m-%dT%H:%M:%S.%fZ") gives (for years
    # 1000 on; it leaves earlier ones unpadded) at a third less CPU: every audit row and thought
    # record asks for one (SPEC §25).
    t = datetime.now(UTC)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}."
        f"{t.microsecond:06d}Z"
    )
