"""`IdentityGate`: an `"identity": "exchange"` server is sent only what a signed-in person asked
(SPEC §20, "Identity through the gateway").

Such a server sees each caller through a token the issuer made from the caller's own
(downstream/exchange.py). A caller that came with no identity provider's token (a tokens-file
token, stdio's `local`) has nothing to exchange, and a request other than tools/call would go over
the switchboard's own connection, as the switchboard: both are refused before anything is sent,
with TOOL_NOT_ADMITTED (the tool is there, this caller may not reach it this way, as a policy's
refusal says) and the reason `identity:exchange` in the row. A tools/call of a signed-in caller
goes on; an exchange the issuer refuses is said by the downstream (nothing sent either).
"""

from __future__ import annotations

from colibri.switchboard.base import TOOL_NOT_ADMITTED
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.routing.observers import Observer, Refusal, RoutedCall, Sending

REASON = "identity:exchange"


class IdentityGate(Observer):
    """Refuses what an exchange server could not be sent as its caller (see the module's docstring)."""

    def __init__(self, config: SwitchboardConfig) -> None:
        self.reconfigured(config)

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._servers = frozenset(spec.name for spec in config.servers if spec.exchange is not None)
        self._issuer = None if config.oauth is None else config.oauth.issuer

    def before_send(self, call: RoutedCall, target: str) -> Sending:
        if not self._servers:
            return None
        # A server's name holds neither '.' nor ':' (config/model.py's NAME_PATTERN).
        server = target.split(".", 1)[0].split(":", 1)[0]
        if server not in self._servers:
            return None
        details = {"reason": REASON, "server": server}
        if call.method != "tools/call":
            return Refusal(
                TOOL_NOT_ADMITTED,
                f"{server} sees each caller through an exchanged token, which only tools/call carries; "
                f"{call.method} would reach it as the switchboard itself",
                details,
            )
        who = call.identity
        if who is None or who.issuer is None or who.issuer != self._issuer:
            came = "no token" if who is None or who.token_id is None else f"the token {who.principal!r}"
            return Refusal(
                TOOL_NOT_ADMITTED,
                f"{server} takes only callers signed in at the identity provider {self._issuer}, whose "
                f"token the switchboard exchanges for one of its own; this call came with {came}, "
                "which cannot be exchanged: sign in there and send its access token instead",
                details,
            )
        return None
