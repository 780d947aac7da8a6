"""`Policies`: who may call what (SPEC §15, §21, `auth.policies`).

A token with a policy sees and calls only the names it admits (config/gateway.py's `Policy`):
`server.tool`, a fallback capability (admitted only if the policy admits its name and at least one
of its entries, and only those entries are tried), and `server:METHOD` for every other request a
server is asked (`resources/read`, `prompts/get`, `completion/complete`, `resources/subscribe`,
`resources/unsubscribe`, `logging/setLevel`, `subscriptions/listen`). A glob over a whole server,
`evil.*` or `evil:*`, covers all of these alike. Lists, `switchboard_status`, `/status` and
UNKNOWN_TOOL's suggestions show a token only what it may call; a request outside the policy gets
TOOL_NOT_ADMITTED naming the policy (its audit reason `policy:<token>`), and nothing is sent. A
token without a policy (and `local`, unless a policy names it) may call everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from colibri.core.shown import quoted, shown
from colibri.switchboard.base import TOOL_NOT_ADMITTED
from colibri.switchboard.config import SERVER_METHODS, Policy, SwitchboardConfig, Target
from colibri.switchboard.routing.observers import Observer, Observers, Refusal, RoutedCall


class Policies(Observer):
    """The policies of `auth.policies`, applied to lists, calls and what a token is shown."""

    def __init__(self, config: SwitchboardConfig) -> None:
        self._policies: Mapping[str, Policy] = config.policies
        self._fallbacks: Mapping[str, tuple[Target, ...]] = config.fallbacks

    @staticmethod
    def among(observers: Observers) -> Policies | None:
        """The board's policies, if one of its observers."""
        return next((each for each in observers.all if isinstance(each, Policies)), None)

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._policies, self._fallbacks = config.policies, config.fallbacks

    def of(self, principal: str | None) -> Policy | None:
        """The principal's policy; None when it may call everything."""
        return None if principal is None else self._policies.get(principal)

    def hides(self, principal: str | None, name: str) -> str | None:
        policy = self.of(principal)
        if policy is None or policy.admits(name):
            return None
        return f"not admitted for the token {principal!r} by {policy.describe()}"

    def shows_server(self, principal: str | None, server: str, tools: Iterable[str]) -> bool:
        """Whether the principal may call anything of `server` (so may see that it exists)."""
        policy = self.of(principal)
        if policy is None:
            return True
        names = [f"{server}.*", f"{server}:*", *(f"{server}:{m}" for m in SERVER_METHODS)]
        return any(policy.admits(name) for name in names) or any(
            policy.admits(f"{server}.{tool}") for tool in tools
        )

    def admit(self, call: RoutedCall) -> Refusal | None:
        policy = self._policies.get(call.principal)
        if policy is None:
            return None
        subject = call.subject
        chain = self._fallbacks.get(call.name) if call.method == "tools/call" else None
        admitted = policy.admits(subject) and (chain is None or any(policy.admits(str(t)) for t in chain))
        if admitted:
            return None
        # What the client named, never the server of a URI it asked for (a server it may not see),
        # escaped and, past 256 characters, named by its length and digest (core/shown.py).
        asked = shown(subject) if call.method == "tools/call" else f"{call.method} of {quoted(call.name)}"
        return Refusal(
            TOOL_NOT_ADMITTED,
            f"{asked} is not admitted for the token {call.principal!r} by {policy.describe()}; "
            "tools/list shows what this token may call",
            {"policy": f"auth.policies.{call.principal}", "principal": call.principal},
        )
