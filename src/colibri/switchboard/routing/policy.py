"""`Policies`: who may call what (SPEC §15, `auth.policies`).

A token with a policy sees and calls only the names it admits (config/gateway.py's `Policy`):
`server.tool`, a fallback capability (admitted only if the policy admits its name and at least one
of its entries, and only those entries are tried), and `server:resources/read` /
`server:prompts/get`. Lists are filtered per token; a call outside the policy gets
TOOL_NOT_ADMITTED naming the policy, and nothing is sent. A token without a policy (and `local`,
unless a policy names it) may call everything.
"""

from __future__ import annotations

from collections.abc import Mapping

from colibri.switchboard.config import Policy, SwitchboardConfig, Target
from colibri.switchboard.routing.observers import Observer, Refusal, RoutedCall

TOOL_NOT_ADMITTED = "TOOL_NOT_ADMITTED"


class Policies(Observer):
    """The policies of `auth.policies`, applied to lists and calls."""

    def __init__(self, config: SwitchboardConfig) -> None:
        self._policies: Mapping[str, Policy] = config.policies
        self._fallbacks: Mapping[str, tuple[Target, ...]] = config.fallbacks

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._policies, self._fallbacks = config.policies, config.fallbacks

    def hides(self, principal: str | None, name: str) -> str | None:
        policy = None if principal is None else self._policies.get(principal)
        if policy is None or policy.admits(name):
            return None
        return f"not admitted for the token {principal!r} by {policy.describe()}"

    def admit(self, call: RoutedCall) -> Refusal | None:
        policy = self._policies.get(call.principal)
        if policy is None:
            return None
        subject = call.subject
        chain = self._fallbacks.get(call.name) if call.method == "tools/call" else None
        admitted = policy.admits(subject) and (chain is None or any(policy.admits(str(t)) for t in chain))
        if admitted:
            return None
        return Refusal(
            TOOL_NOT_ADMITTED,
            f"{subject} is not admitted for the token {call.principal!r} by {policy.describe()}; "
            "tools/list shows what this token may call",
            {"policy": f"auth.policies.{call.principal}", "principal": call.principal},
        )
