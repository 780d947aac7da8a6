"""`RateLimits`: how often a caller, and each tool, may be called (SPEC §15, §20, §21, `rate_limits`).

Each principal (`local` included) has a bucket of its own, of `burst` calls that refills at
`calls_per_minute`, under the limit that applies to it (SPEC §20: limits key on the principal and
may name IdP groups, as policies do, policy.py):
- its own entry of `per_principal`, when one names it (`"ana"`);
- otherwise the entries of its IdP groups (`"group:sre"` for each group `sre` of its Identity): the
  most generous of them (the most calls per minute, then the largest burst), as a policy admits
  what any of its groups' policies admits;
- otherwise `per_token`, every principal's default; with none of these it is not limited.
A group's entry gives each member a bucket of that size, never one bucket the group shares (a
member's flood must not starve the rest). A bucket keeps what it holds when its caller's limit
changes (a new token with other groups, a reload), cut to the new burst.

Each key of `per_tool` has one bucket, shared by every caller and by every name the key matches
(a key may be a glob: `"open.*"` is the open server's tools together).
Over a limit a call is not forwarded and gets RATE_LIMITED with `details.retry_after_s`, the
seconds until it would be admitted; the audit records it as denied, reason `rate_limit`.

Refusals cost the caller too, so that a flood of bad calls is soon refused cheaply: the token's
bucket is taken from first (the limiter is the first observer asked), before a policy or a pin
may refuse the call, and a call refused before admission (an unknown or over-long name) takes
from it as well (`refused`). A `per_tool` key counts every call that reaches a tool it matches,
whatever name it came by: the name the client asked (`server.tool`, a fallback capability,
`server:resources/read`) at admission, and each entry a capability's call is sent to at
`before_send` — so `cap` → `open.echo` counts against `open.echo`'s limit. A reload with other
limits starts their buckets full.
"""

from __future__ import annotations

import fnmatch
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from colibri.core.shown import shown
from colibri.switchboard.base import RATE_LIMITED, json_path
from colibri.switchboard.config import GROUP, Limit, RateLimits, SwitchboardConfig
from colibri.switchboard.routing.observers import Observer, Refusal, RoutedCall, Sending

__all__ = ["RATE_LIMITED", "Bucket", "Limiter"]

_GLOB = frozenset("*?[")


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
    """The buckets of `rate_limits`, taken from at admission and before each entry is sent."""

    def __init__(self, config: SwitchboardConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._limits: RateLimits = config.rate_limits
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self._split()

    def reconfigured(self, config: SwitchboardConfig) -> None:
        if config.rate_limits != self._limits:
            self._limits, self._buckets = config.rate_limits, {}
            self._split()

    def _split(self) -> None:
        per_tool = self._limits.per_tool or {}
        self._exact = {key: limit for key, limit in per_tool.items() if _GLOB.isdisjoint(key)}
        self._globs = [(key, limit) for key, limit in per_tool.items() if not _GLOB.isdisjoint(key)]

    def admit(self, call: RoutedCall) -> Refusal | None:
        return self._take(call, call.subject, with_token=True)

    def refused(self, call: RoutedCall) -> Refusal | None:
        return self._take(call, None, with_token=True)

    def before_send(self, call: RoutedCall, target: str) -> Sending:
        if target == call.subject or not (self._exact or self._globs):
            return None  # counted at admission under the name asked
        return self._take(call, target, with_token=False)

    def _keys(self, name: str) -> list[tuple[str, Limit]]:
        """Every `per_tool` key that matches `name`, with its limit."""
        exact = self._exact.get(name)
        matched = [] if exact is None else [(name, exact)]
        matched += [(key, limit) for key, limit in self._globs if fnmatch.fnmatchcase(name, key)]
        return matched

    def _take(self, call: RoutedCall, name: str | None, *, with_token: bool) -> Refusal | None:
        """One from each bucket that applies, only when all of them have one; else the refusal."""
        applying: list[tuple[str, Bucket]] = []
        now = self._clock()
        own = self._own(call) if with_token else None
        if own is not None:
            applying.append((own[0], self._bucket("token", call.principal, own[1], now)))
        for key, limit in [] if name is None else self._keys(name):
            applying.append((f'rate_limits.per_tool["{key}"]', self._bucket("tool", key, limit, now)))
        if not applying:
            return None
        wait, where, limit = max(
            ((bucket.wait(now), where, bucket.limit) for where, bucket in applying), key=lambda item: item[0]
        )
        if wait <= 0:
            for _, bucket in applying:
                bucket.tokens -= 1.0
            return None
        retry_after_s = math.ceil(wait * 1000) / 1000
        asked = (
            shown(call.subject) if name is None or name == call.subject else f"{shown(call.subject)} → {name}"
        )
        return Refusal(
            RATE_LIMITED,
            f"{asked} by {call.principal!r} is over {where}: {limit.calls_per_minute:g} calls per "
            f"minute (bursts of {limit.burst}); it was not sent, retry in {retry_after_s:g} s",
            {"retry_after_s": retry_after_s, "limit": where, "principal": call.principal},
        )

    def _own(self, call: RoutedCall) -> tuple[str, Limit] | None:
        """The limit of the caller's own bucket and where the config sets it; None: not limited."""
        per_principal = self._limits.per_principal or {}
        if per_principal:
            own = per_principal.get(call.principal)
            if own is not None:
                return json_path(("rate_limits", "per_principal", call.principal)), own
            groups = () if call.identity is None else call.identity.groups
            theirs = [(GROUP + group, per_principal.get(GROUP + group)) for group in groups]
            found = [(key, limit) for key, limit in theirs if limit is not None]
            if found:
                key, limit = max(found, key=lambda item: (item[1].calls_per_minute, item[1].burst))
                return json_path(("rate_limits", "per_principal", key)), limit
        per_token = self._limits.per_token
        return None if per_token is None else ("rate_limits.per_token", per_token)

    def _bucket(self, kind: str, key: str, limit: Limit, now: float) -> Bucket:
        bucket = self._buckets.get((kind, key))
        if bucket is None:
            bucket = self._buckets[(kind, key)] = Bucket(limit, float(limit.burst), now)
        elif bucket.limit != limit:
            bucket.wait(now)  # refilled at the rate it had until now
            bucket.limit, bucket.tokens = limit, min(bucket.tokens, float(limit.burst))
        return bucket
