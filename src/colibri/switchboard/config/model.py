"""The switchboard's config as it runs: small frozen objects (SPEC §7, §12). `load.py` builds them.

A `SwitchboardConfig` holds one `ServerSpec` per `mcpServers` entry (how to reach the server, its
`HealthPolicy`, its tool filter and timeouts), the `fallbacks` chains of `Target`s, and the
top-level settings.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from colibri.domains.access.api import StatementKey
from colibri.serving.oauth import OAuthSettings
from colibri.switchboard.config.approvals import Approvals
from colibri.switchboard.config.gateway import AuditSpec, Policy, RateLimits
from colibri.switchboard.config.search import ToolSearch

STATUS_TOOL = "switchboard_status"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    """Intervals, timeouts and thresholds for one downstream (seconds; fractions allowed)."""

    liveness_s: float = 10.0
    readiness_s: float = 30.0
    deep_s: float = 300.0
    failures_to_quarantine: int = 3
    cooldown_s: float = 60.0
    cooldown_max_s: float = 600.0
    call_timeout_s: float = 30.0
    check_timeout_s: float = 5.0
    restart_backoff_s: float = 0.5
    restart_backoff_max_s: float = 30.0


@dataclass(frozen=True, slots=True)
class DeepCheck:
    """The capability check: a lightweight real tool call."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One downstream: how to reach it and how to judge its health."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cwd: str | None = None
    url: str | None = None
    health: HealthPolicy = HealthPolicy()
    deep: DeepCheck | None = None
    idempotent: frozenset[str] = frozenset()
    sse: bool = False
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    disabled: bool = False
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    tool_timeouts: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # Values the environment and the envFile put into this entry: never to be said back (SPEC §14).
    hidden: frozenset[str] = field(default=frozenset(), repr=False)
    # "isolate": "principal" (SPEC §21): a process of its own per principal, stopped after `idle_s`
    # without calls; `${PRINCIPAL}` in `env` and in the envFile path (`env_file`, read per principal
    # when it names one) is that principal's name (expand.py's `for_principal`).
    isolate: bool = False
    idle_s: float = 300.0
    env_file: str | None = None
    # "identity": "exchange" (SPEC §20): the issuer and the switchboard's own client at it, with which
    # each caller's token is exchanged for one whose audience is this server (downstream/exchange.py);
    # `principal` names whose own connection this is (None: the switchboard's, for checks and lists).
    exchange: OAuthSettings | None = field(default=None, repr=False)
    principal: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        if self.url is None:
            return "stdio"
        return "sse" if self.sse else "http"

    def offers(self, tool: str) -> bool:
        """Whether the tool filter lets `tool` through (globs, as in `fnmatch`)."""
        if self.allow is not None and not any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.allow):
            return False
        return not any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.deny)

    def timeout_for(self, tool: str) -> float:
        return self.tool_timeouts.get(tool, self.health.call_timeout_s)


@dataclass(frozen=True, slots=True)
class Target:
    """One entry of a fallback chain: a tool on a server."""

    server: str
    tool: str

    def __str__(self) -> str:
        return f"{self.server}.{self.tool}"


@dataclass(frozen=True, slots=True)
class SwitchboardConfig:
    """The whole validated file."""

    servers: tuple[ServerSpec, ...]
    fallbacks: Mapping[str, tuple[Target, ...]] = field(default_factory=lambda: MappingProxyType({}))
    # How long the first tools/list (and early calls) wait for every downstream's first verdict.
    startup_wait_s: float = 10.0
    tokens_file: str | None = None
    oauth: OAuthSettings | None = None  # `auth.oauth`: the identity provider's tokens too (SPEC §20)
    # The audited gateway (SPEC §15, gateway.py): the store every routed call is recorded in, what
    # a changed tool definition meets, who may call what, and how often.
    audit: AuditSpec | None = None
    pins: Literal["block", "warn", "off"] = "off"
    policies: Mapping[str, Policy] = field(default_factory=lambda: MappingProxyType({}))
    rate_limits: RateLimits = field(default_factory=RateLimits)
    # `identity_key`: what signs the caller's statement to a downstream Colibri (SPEC §20); None:
    # the audit store's signing key, if there is a store (routing/vouching.py)
    identity_key: StatementKey | None = None
    approvals: Approvals | None = None  # SPEC §22: the calls a person decides before they run
    # `tool_search` (SPEC §23): find_tools and call_tool listed in place of every tool, or not
    tool_search: ToolSearch = field(default_factory=ToolSearch)

    def server(self, name: str) -> ServerSpec:
        return next(spec for spec in self.servers if spec.name == name)

    @property
    def enabled(self) -> tuple[ServerSpec, ...]:
        return tuple(spec for spec in self.servers if not spec.disabled)
