"""The caller of each routed call, told to a downstream Colibri (SPEC §20 "Identity through the
gateway"): `_meta["io.colibri/on-behalf-of"]`, a statement signed with the switchboard's identity key
(domains/access/on_behalf.py), which a Colibri trusting that key records as the call's principal.

The key is the config's `identity_key`, else the audit store's signing key; with neither, nothing
is signed. Only what is sent is signed: the route hands a downstream the call's `Statements`, and
the downstream signs one only when it is a Colibri (downstream/calls.py), so a third-party server
never sees a principal and a call to one costs no signature.

A statement's `jti` is the call's correlation id: the audit row's when the call is audited (so
both Colibris' rows of one call can be matched), else a fresh UUID; a second statement for the
same call (another entry of its fallback chain) adds `.2`, `.3`, ..., since a Colibri refuses a
`jti` it has seen.
"""

from __future__ import annotations

from colibri.core import ids
from colibri.domains.access.api import ON_BEHALF_OF, StatementKey
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.routing.observers import RoutedCall


class Statements:
    """The on-behalf-of statements of one call, each signed when a downstream Colibri is sent it."""

    __slots__ = ("_call", "_key", "_made")

    def __init__(self, key: StatementKey, call: RoutedCall) -> None:
        self._key = key
        self._call = call
        self._made = 0

    def __call__(self) -> dict[str, str]:
        """The `_meta` entries of the next tools/call of this call sent to a downstream Colibri."""
        self._made += 1
        call = self._call
        # The audit's record (audit/rows.py) holds the call's correlation id once its row is opened.
        correlation = getattr(call.record, "correlation_id", None) or ids.correlation_id()
        jti = correlation if self._made == 1 else f"{correlation}.{self._made}"
        who = call.identity
        issuer = None if who is None else who.issuer
        return {ON_BEHALF_OF: self._key.sign(call.principal, issuer, jti)}


class Vouching:
    """Which key signs the statements: the config's `identity_key`, else `default` (the audit store's)."""

    def __init__(self, config: SwitchboardConfig, default: StatementKey | None = None) -> None:
        self.default = default
        self._configured = config.identity_key

    @property
    def key(self) -> StatementKey | None:
        return self._configured or self.default

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._configured = config.identity_key

    def statements(self, call: RoutedCall) -> Statements | None:
        """What signs `call`'s statements; None when there is no key (nothing is sent)."""
        key = self.key
        return None if key is None else Statements(key, call)
