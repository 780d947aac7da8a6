"""The gateways a Colibri trusts to say who their callers are (SPEC §20 "Identity through the gateway").

`COLIBRI_TRUSTED_GATEWAYS=FILE` names their verifier keys, one a line as `colibri key show` prints
them; a file that cannot be read or holds a bad line stops the start (exit 2, naming the line).

A tools/call whose `_meta["io.colibri/on-behalf-of"]` is a statement signed by one of those keys,
unexpired and never seen before, is the call of the principal it names: the `Caller` becomes that
principal, with the issuer of its credential, `token_id` the statement's `jti` (the gateway's
correlation id of the call, so its row and the gateway's row can be matched) and `via` the
gateway: over HTTP the gateway's own principal here (its token's name), elsewhere the name of the
key that signed. The gateway's own scope still bounds what the call may do. Any other statement
(unsigned, a bad signature, expired, replayed, of a key not trusted, or sent where no gateway is
trusted) is ignored: one log line (at most one a minute for each reason, never the statement),
and the call stays the gateway's own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colibri.core.callers import Caller
from colibri.core.env import ConfigError

if TYPE_CHECKING:
    from colibri.domains.access.on_behalf import TrustedKeys

log = logging.getLogger("colibri.gateways")

VARIABLE = "COLIBRI_TRUSTED_GATEWAYS"
ON_BEHALF_OF = "io.colibri/on-behalf-of"  # as domains/access/on_behalf.py names it, without its import
LOG_EVERY_S = 60.0


class TrustedGatewaysError(ConfigError):
    """COLIBRI_TRUSTED_GATEWAYS names a file that cannot be used; the message names the line."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, f"{VARIABLE}: {message}")
        self.variable = VARIABLE


def trusted_gateways(env: Mapping[str, str]) -> TrustedKeys | None:
    """The keys COLIBRI_TRUSTED_GATEWAYS's file holds; None when it is unset or empty."""
    raw = env.get(VARIABLE)
    if not raw:
        return None
    from colibri.domains.access.on_behalf import TrustedKeys

    try:
        return TrustedKeys.read(Path(raw))
    except ValueError as exc:
        raise TrustedGatewaysError(str(exc)) from None


@dataclass
class _Quiet:
    logged_at: float
    suppressed: int = 0


class Gateways:
    """Turns a tools/call's caller into the principal a trusted gateway vouched for (see the module)."""

    def __init__(self, trusted: TrustedKeys | None, clock: Callable[[], float] = time.time) -> None:
        self._trusted = trusted
        self._clock = clock
        self._seen: dict[tuple[str, str], float] = {}  # (kid, jti) -> when the statement expires
        self._quiet: dict[str, _Quiet] = {}

    def caller(self, caller: Caller, meta: Mapping[str, Any] | None) -> Caller:
        """`caller`, or the principal the call's statement vouches for when it is to be taken."""
        if meta is None or ON_BEHALF_OF not in meta:
            return caller
        trusted = self._trusted
        if trusted is None:
            self._ignored(
                "untrusted",
                f"this Colibri trusts no gateway (set {VARIABLE} to a file of their keys)",
                caller,
            )
            return caller
        from colibri.domains.access.on_behalf import StatementError

        try:
            statement = trusted.verify(meta[ON_BEHALF_OF])
            self._first_time(statement.kid, statement.jti, statement.expires_at)
        except StatementError as exc:
            self._ignored(exc.reason, str(exc), caller)
            return caller
        proved = caller.token_id is not None or caller.issuer is not None
        return replace(
            caller,
            principal=statement.principal,
            issuer=statement.issuer,
            token_id=statement.jti,
            groups=(),
            via=caller.principal if proved else statement.key_name,
        )

    def _first_time(self, kid: str, jti: str, expires_at: float) -> None:
        from colibri.domains.access.on_behalf import LEEWAY_S, StatementError

        now = self._clock()
        seen = self._seen
        # Kept until it expires (with the leeway a statement is taken in): after that it is refused anyway.
        while seen and next(iter(seen.values())) < now:
            del seen[next(iter(seen))]
        if (kid, jti) in seen:
            raise StatementError("replayed", f"its jti {jti!r} was taken before (a replay)")
        seen[(kid, jti)] = expires_at + LEEWAY_S

    def _ignored(self, reason: str, why: str, caller: Caller) -> None:
        now = time.monotonic()
        quiet = self._quiet.get(reason)
        if quiet is not None and now - quiet.logged_at < LOG_EVERY_S:
            quiet.suppressed += 1
            return
        more = (
            "" if quiet is None or not quiet.suppressed else f" ({quiet.suppressed} more since, not logged)"
        )
        log.warning(
            "ignored an on-behalf-of statement (%s: %s); the call is recorded as %s's own%s",
            reason,
            why,
            caller.principal,
            more,
        )
        self._quiet[reason] = _Quiet(now)
