"""The switchboard's config file: the `mcpServers` JSON plus `fallbacks` and `health` (SPEC §7).

`load(path)` returns a frozen `SwitchboardConfig` or raises `ConfigError` naming the JSON path of the
first problem and what was expected there. Pydantic checks the shapes; the cross-field rules (a server
needs `command` or `url`, fallback targets must name configured servers, ...) are checked afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colibri.switchboard.config_errors import NAME_PATTERN, first_problem
from colibri.switchboard.config_errors import kind_of as _kind
from colibri.switchboard.config_errors import path as _path
from colibri.switchboard.errors import ConfigError

STATUS_TOOL = "switchboard_status"

# Finite: `Infinity` (which JSON parsers accept) as a timeout would let a call hang forever.
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


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


HEALTH_KEYS = tuple(f.name for f in fields(HealthPolicy))


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

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"


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

    def server(self, name: str) -> ServerSpec:
        return next(spec for spec in self.servers if spec.name == name)


# --- the raw file, as pydantic checks it ------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Health(_Strict):
    liveness_s: Seconds | None = None
    readiness_s: Seconds | None = None
    deep_s: Seconds | None = None
    failures_to_quarantine: Annotated[int, Field(ge=1)] | None = None
    cooldown_s: Seconds | None = None
    cooldown_max_s: Seconds | None = None
    call_timeout_s: Seconds | None = None
    check_timeout_s: Seconds | None = None
    restart_backoff_s: Seconds | None = None
    restart_backoff_max_s: Seconds | None = None


class _Deep(_Strict):
    tool: Annotated[str, Field(min_length=1)]
    arguments: dict[str, Any] = {}


class _ServerHealth(_Health):
    deep: _Deep | None = None


class _Server(_Strict):
    type: Literal["stdio", "http", "streamable-http"] | None = None
    command: Annotated[str, Field(min_length=1)] | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: Annotated[str, Field(pattern=r"^https?://")] | None = None
    health: _ServerHealth = _ServerHealth()
    idempotent: list[str] = []


class _File(_Strict):
    mcpServers: Annotated[dict[str, _Server], Field(min_length=1)]
    fallbacks: dict[str, Annotated[list[str], Field(min_length=1)]] = {}
    health: _Health = _Health()
    startup_wait_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


_KEYS: dict[str, tuple[str, ...]] = {
    "file": tuple(_File.model_fields),
    "server": tuple(_Server.model_fields),
    "server_health": tuple(_ServerHealth.model_fields),
    "health": tuple(_Health.model_fields),
    "deep": tuple(_Deep.model_fields),
}


# --- loading -----------------------------------------------------------------------------------------


def load(path: str | Path) -> SwitchboardConfig:
    """Read, parse and validate the config file at `path`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("$", f"cannot read the file ({exc}); expected a readable UTF-8 JSON file") from None
    return parse(text)


def parse(text: str) -> SwitchboardConfig:
    """Validate the text of a config file."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "$", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; expected a JSON object"
        ) from None
    if not isinstance(raw, dict):
        raise ConfigError("$", f'expected a JSON object with "mcpServers", got {_kind(raw)}')
    try:
        parsed = _File.model_validate(raw)
    except ValidationError as exc:
        raise first_problem(exc, _KEYS) from None
    return _build(parsed)


def _build(parsed: _File) -> SwitchboardConfig:
    globals_ = parsed.health.model_dump(exclude_none=True)
    _check_cooldowns(HealthPolicy(**globals_), "health")
    servers = tuple(_server(name, entry, globals_) for name, entry in parsed.mcpServers.items())
    known = {spec.name for spec in servers}
    fallbacks = {
        capability: tuple(_target(capability, index, entry, known) for index, entry in enumerate(chain))
        for capability, chain in parsed.fallbacks.items()
    }
    for capability in fallbacks:
        if not NAME_PATTERN.match(capability) or capability == STATUS_TOOL:
            raise ConfigError(
                _path(("fallbacks", capability)),
                "expected a capability name of 1-64 letters, digits, '_' or '-' "
                f"(no dots, not {STATUS_TOOL!r}), so it cannot clash with a namespaced tool",
            )
    startup = {} if parsed.startup_wait_s is None else {"startup_wait_s": parsed.startup_wait_s}
    return SwitchboardConfig(servers=servers, fallbacks=MappingProxyType(fallbacks), **startup)


def _server(name: str, entry: _Server, globals_: dict[str, Any]) -> ServerSpec:
    where = ("mcpServers", name)
    if not NAME_PATTERN.match(name):
        raise ConfigError(
            _path(where),
            "expected a server name of 1-64 letters, digits, '_' or '-' (it prefixes tool names)",
        )
    if entry.command is None and entry.url is None:
        raise ConfigError(
            _path((*where, "command")),
            'missing; expected "command" (a stdio server) or "url" (a Streamable HTTP server)',
        )
    if entry.command is not None and entry.url is not None:
        raise ConfigError(_path((*where, "url")), 'expected either "command" or "url", not both')
    if entry.url is not None and (entry.args or entry.env or entry.cwd is not None):
        raise ConfigError(_path(where), '"args", "env" and "cwd" apply to stdio servers only, not to a "url"')
    if entry.type is not None and (entry.type == "stdio") != (entry.command is not None):
        expected = '"stdio" with "command"' if entry.command is not None else '"http" with "url"'
        raise ConfigError(_path((*where, "type")), f"expected {expected}, got {entry.type!r}")
    own = entry.health.model_dump(exclude_none=True, exclude={"deep"})
    policy = HealthPolicy(**{**globals_, **own})
    _check_cooldowns(policy, _path((*where, "health")) if own else "health")
    deep = entry.health.deep
    return ServerSpec(
        name=name,
        command=entry.command,
        args=tuple(entry.args),
        env=MappingProxyType(dict(entry.env)),
        cwd=entry.cwd,
        url=entry.url,
        health=policy,
        deep=None
        if deep is None
        else DeepCheck(tool=deep.tool, arguments=MappingProxyType(dict(deep.arguments))),
        idempotent=frozenset(entry.idempotent),
    )


def _target(capability: str, index: int, entry: str, known: set[str]) -> Target:
    where = _path(("fallbacks", capability, index))
    server, dot, tool = entry.partition(".")
    if not dot or not server or not tool:
        raise ConfigError(where, f'expected "server.tool", got {entry!r}')
    if server not in known:
        raise ConfigError(
            where, f"unknown server {server!r} in {entry!r}; expected one of: {', '.join(sorted(known))}"
        )
    return Target(server=server, tool=tool)


def _check_cooldowns(policy: HealthPolicy, where: str) -> None:
    if policy.cooldown_max_s < policy.cooldown_s:
        raise ConfigError(
            f"{where}.cooldown_max_s",
            f"expected a value >= cooldown_s ({policy.cooldown_s:g}), got {policy.cooldown_max_s:g}",
        )
    if policy.restart_backoff_max_s < policy.restart_backoff_s:
        raise ConfigError(
            f"{where}.restart_backoff_max_s",
            f"expected a value >= restart_backoff_s ({policy.restart_backoff_s:g}), "
            f"got {policy.restart_backoff_max_s:g}",
        )


# --- messages ----------------------------------------------------------------------------------------
