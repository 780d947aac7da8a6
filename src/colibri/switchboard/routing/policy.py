"""`Policies`: who may call what (SPEC §15, §20, §21, `auth.policies`).

A caller with a policy sees and calls only the names it admits (config/gateway.py's `Policy`):
`server.tool`, a fallback capability (admitted only if the policy admits its name and at least one
of its entries, and only those entries are tried), and `server:METHOD` for every other request a
server is asked (`resources/read`, `prompts/get`, `completion/complete`, `resources/subscribe`,
`resources/unsubscribe`, `logging/setLevel`, `subscriptions/listen`). A glob over a whole server,
`evil.*` or `evil:*`, covers all of these alike. Lists, `switchboard_status`, `/status` and
UNKNOWN_TOOL's suggestions show a caller only what it may call; a request outside the policy gets
TOOL_NOT_ADMITTED naming the policy (its audit reason `policy:<name>`), and nothing is sent.

Which policy governs a caller (SPEC §20, "The principal is the person"):
- its principal's own policy, when one names it (`"ana"`) — then its groups' policies do not count;
- otherwise the policies of its IdP groups (`"group:sre"` for each group `sre` of its Identity):
  it may call a name if any of them admits it (a union); a group without a policy adds nothing;
- with no policy at all (a token without one, `local` unless a policy names it, a person none of
  whose groups has one) it may call everything.
A refusal by its groups' policies names the first of them (in the order of the Identity's groups)
as its reason, `policy:group:sre`, and all of them in its message and details.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from colibri.core.shown import quoted, shown
from colibri.switchboard.base import TOOL_NOT_ADMITTED
from colibri.switchboard.config import GROUP, SERVER_METHODS, Policy, SwitchboardConfig, Target
from colibri.switchboard.routing.observers import Observer, Observers, Refusal, RoutedCall, Who


@dataclass(frozen=True, slots=True)
class Governing:
    """The policies that govern one caller: its own, or those of its groups; any one admitting a
    name admits it."""

    principal: str
    policies: tuple[Policy, ...]

    def admits(self, name: str) -> bool:
        return any(policy.admits(name) for policy in self.policies)

    def describe(self) -> str:
        return " or ".join(policy.describe() for policy in self.policies)

    def caller(self) -> str:
        """The caller as a refusal names it: the token, or the person and the groups that count."""
        own = self.policies[0].token == self.principal
        if own:
            return f"the token {self.principal!r}"
        groups = ", ".join(policy.token.removeprefix(GROUP) for policy in self.policies)
        return f"{self.principal!r} (as a member of {groups})"


class Policies(Observer):
    """The policies of `auth.policies`, applied to lists, calls and what a caller is shown."""

    def __init__(self, config: SwitchboardConfig) -> None:
        self._policies: Mapping[str, Policy] = config.policies
        self._fallbacks: Mapping[str, tuple[Target, ...]] = config.fallbacks

    @staticmethod
    def among(observers: Observers) -> Policies | None:
        """The board's policies, if one of its observers."""
        return next((each for each in observers.all if isinstance(each, Policies)), None)

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._policies, self._fallbacks = config.policies, config.fallbacks

    def of(self, who: Who | None) -> Governing | None:
        """The policies governing `who` (a principal's name, or its Identity with its groups);
        None when it may call everything."""
        if who is None:
            return None
        principal, groups = (who, ()) if isinstance(who, str) else (who.principal, who.groups)
        own = self._policies.get(principal)
        if own is not None:
            return Governing(principal, (own,))
        found = (self._policies.get(GROUP + group) for group in dict.fromkeys(groups))
        theirs = tuple(policy for policy in found if policy is not None)
        return Governing(principal, theirs) if theirs else None

    def hides(self, principal: Who | None, name: str) -> str | None:
        governing = self.of(principal)
        if governing is None or governing.admits(name):
            return None
        return f"not admitted for {governing.caller()} by {governing.describe()}"

    def shows_server(self, principal: Who | None, server: str, tools: Iterable[str]) -> bool:
        """Whether the caller may call anything of `server` (so may see that it exists)."""
        governing = self.of(principal)
        if governing is None:
            return True
        names = [f"{server}.*", f"{server}:*", *(f"{server}:{m}" for m in SERVER_METHODS)]
        return any(governing.admits(name) for name in names) or any(
            governing.admits(f"{server}.{tool}") for tool in tools
        )

    def admit(self, call: RoutedCall) -> Refusal | None:
        governing = self.of(call.who)
        if governing is None:
            return None
        subject = call.subject
        chain = self._fallbacks.get(call.name) if call.method == "tools/call" else None
        admitted = governing.admits(subject) and (
            chain is None or any(governing.admits(str(t)) for t in chain)
        )
        if admitted:
            return None
        # What the client named, never the server of a URI it asked for (a server it may not see),
        # escaped and, past 256 characters, named by its length and digest (core/shown.py).
        asked = shown(subject) if call.method == "tools/call" else f"{call.method} of {quoted(call.name)}"
        named = [f"auth.policies.{policy.token}" for policy in governing.policies]
        details = {"policy": named[0], "principal": call.principal}
        if len(named) > 1:
            details["policies"] = ", ".join(named)
        return Refusal(
            TOOL_NOT_ADMITTED,
            f"{asked} is not admitted for {governing.caller()} by {governing.describe()}; "
            "tools/list shows what this token may call",
            details,
        )
