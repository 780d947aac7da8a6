"""`RateLimits`: how often a token, and each tool, may be called (SPEC §15, `rate_limits`).

Each token (every principal, `local` included) has a bucket of `per_token.burst` calls that
refills at `calls_per_minute`; each tool named in `per_tool` has one bucket shared by every caller.
A call takes one from each bucket that applies, and only when all of them have one: over the limit
it is not forwarded and gets RATE_LIMITED with `details.retry_after_s`, the seconds until it would
be admitted; the audit records it as denied. A reload with other limits starts their buckets full.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from colibri.switchboard.config import Limit, RateLimits, SwitchboardConfig
from colibri.switchboard.routing.observers import Observer, Refusal, RoutedCall

RATE_LIMITED = "RATE_LIMITED"


@dataclass(slots=True)
class Bucket:
    limit: Limit
    tokens: float
    at: float

    def wait(self, now: float) -> float:
        """Refill up to now; the seconds until one call fits (0: it fits now)."""
        rate = self.limit.calls_per_minute / 60.0
        self.tokens = min(float(self.limit.burst), self.tokens + (now - self.at) * rate)
        self.at = now
        # A hair under one call (floating point) is one call: never ask for a wait of 0.000 s.
        return 0.0 if self.tokens >= 1.0 - 1e-9 else (1.0 - self.tokens) / rate


class Limiter(Observer):
    """The buckets of `rate_limits`, taken from at admission."""

    def __init__(self, config: SwitchboardConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._limits: RateLimits = config.rate_limits
        self._buckets: dict[tuple[str, str], Bucket] = {}

    def reconfigured(self, config: SwitchboardConfig) -> None:
        if config.rate_limits != self._limits:
            self._limits, self._buckets = config.rate_limits, {}

    def admit(self, call: RoutedCall) -> Refusal | None:
        limits = self._limits
        applying: list[tuple[str, Bucket]] = []
        now = self._clock()
        if limits.per_token is not None:
            applying.append(
                ("rate_limits.per_token", self._bucket("token", call.principal, limits.per_token, now))
            )
        tool_limit = None if limits.per_tool is None else limits.per_tool.get(call.subject)
        if tool_limit is not None:
            where = f'rate_limits.per_tool["{call.subject}"]'
            applying.append((where, self._bucket("tool", call.subject, tool_limit, now)))
        waits = [(bucket.wait(now), where, bucket.limit) for where, bucket in applying]
        wait, where, limit = max(waits, default=(0.0, "", None), key=lambda item: item[0])
        if wait <= 0 or limit is None:
            for _, bucket in applying:
                bucket.tokens -= 1.0
            return None
        retry_after_s = math.ceil(wait * 1000) / 1000
        return Refusal(
            RATE_LIMITED,
            f"{call.subject} by {call.principal!r} is over {where}: {limit.calls_per_minute:g} calls per "
            f"minute (bursts of {limit.burst}); it was not sent, retry in {retry_after_s:g} s",
            {"retry_after_s": retry_after_s, "limit": where, "principal": call.principal},
        )

    def _bucket(self, kind: str, key: str, limit: Limit, now: float) -> Bucket:
        bucket = self._buckets.get((kind, key))
        if bucket is None:
            bucket = self._buckets[(kind, key)] = Bucket(limit, float(limit.burst), now)
        return bucket
