"""Rate limits (routing/limits.py) with the clock injected: a bucket of `burst` calls refilled at
`calls_per_minute`, per token and per tool, and `retry_after_s` the wait until a call would fit."""

from __future__ import annotations

import json
from typing import Any

from colibri.switchboard.config import parse
from colibri.switchboard.routing import RATE_LIMITED, Limiter, RoutedCall


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(**limits: Any) -> tuple[Limiter, Clock]:
    config = parse(json.dumps({"mcpServers": {"git": {"command": "g"}}, "rate_limits": limits}))
    clock = Clock()
    return Limiter(config, clock), clock


def test_the_sixth_call_in_a_minute_under_five_waits_twelve_seconds() -> None:
    limits, clock = limiter(per_token={"calls_per_minute": 5})
    admitted = [limits.admit(RoutedCall("git.commit", {}, "ci")) for _ in range(5)]
    refused = limits.admit(RoutedCall("git.commit", {}, "ci"))
    assert admitted == [None] * 5
    assert refused is not None and refused.code == RATE_LIMITED
    assert refused.details == {"retry_after_s": 12.0, "limit": "rate_limits.per_token", "principal": "ci"}
    assert limits.admit(RoutedCall("git.commit", {}, "alice")) is None  # each token its own bucket
    clock.now += 11.9
    assert limits.admit(RoutedCall("git.commit", {}, "ci")) is not None
    clock.now += 0.1
    assert limits.admit(RoutedCall("git.commit", {}, "ci")) is None


def test_a_tool_limit_is_shared_and_a_refused_call_takes_from_no_bucket() -> None:
    limits, _ = limiter(
        per_token={"calls_per_minute": 60, "burst": 3}, per_tool={"git.push": {"calls_per_minute": 1}}
    )
    assert limits.admit(RoutedCall("git.push", {}, "ci")) is None
    refused = limits.admit(RoutedCall("git.push", {}, "alice"))
    assert refused is not None and refused.details["limit"] == 'rate_limits.per_tool["git.push"]'
    assert refused.details["retry_after_s"] == 60.0
    # alice's own bucket was not charged for the refused call: three more of another tool go through
    assert [limits.admit(RoutedCall("git.log", {}, "alice")) for _ in range(3)] == [None] * 3
    assert limits.admit(RoutedCall("git.log", {}, "alice")) is not None
