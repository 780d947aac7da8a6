"""The audited gateway's sections of the config file (SPEC §15): `audit`, `pins`, `auth.policies`
and `rate_limits` — their raw shapes (checked by pydantic with the rest of the file, schema.py),
the frozen objects they become, and their cross-field rules.

    "audit": {"db": "PATH"} or {"db_url": "postgresql://..."}, and "signing_key": "FILE"
    "pins": "block" | "warn" | "off"             (block by default with an audit store)
    "auth": {"tokens_file": ..., "policies": {"CALLER": {"allow": [globs], "deny": [globs]}}}
    "rate_limits": {"per_token": {"calls_per_minute": N, "burst": B},
                    "per_principal": {"CALLER": {"calls_per_minute": N, "burst": B}},
                    "per_tool": {"server.tool": {"calls_per_minute": N, "burst": B}}}

A CALLER is a principal's name or an IdP group, `group:NAME` (callers.py, SPEC §20).

Relative paths (`db`, `signing_key`) are relative to the config file's folder. `db_url` expands
`${VAR}` like a server's `url`, so a password stays in the environment.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.callers import check_callers

Glob = Annotated[str, Field(min_length=1)]
PinMode = Literal["block", "warn", "off"]


# What a server is asked besides its tools, as policies and limits name it (`server:METHOD`).
SERVER_METHODS = (
    "resources/read",
    "prompts/get",
    "completion/complete",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "subscriptions/listen",
)


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class RawAudit(_Strict):
    db: Annotated[str, Field(min_length=1)] | None = None
    db_url: Annotated[str, Field(pattern=r"^postgres(ql)?://")] | None = None
    signing_key: Annotated[str, Field(min_length=1)] | None = None


class RawPolicy(_Strict):
    allow: list[Glob] | None = None
    deny: list[Glob] | None = None


class RawLimit(_Strict):
    calls_per_minute: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    burst: Annotated[int, Field(ge=1)] | None = None


class RawRateLimits(_Strict):
    per_token: RawLimit | None = None
    per_principal: dict[str, RawLimit] = {}  # a principal's or a group's own limit (routing/limits.py)
    per_tool: dict[str, RawLimit] = {}


KEYS: dict[str, tuple[str, ...]] = {
    "audit": tuple(RawAudit.model_fields),
    "policy": tuple(RawPolicy.model_fields),
    "limit": tuple(RawLimit.model_fields),
    "rate_limits": tuple(RawRateLimits.model_fields),
}


# --- what the switchboard runs on ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuditSpec:
    """Where the audit store is (a SQLite file or a PostgreSQL URL) and the key its checkpoints take."""

    target: Path | str
    signing_key: Path | None = None  # None: colibri.key beside the SQLite file

    @property
    def sqlite_path(self) -> Path | None:
        return self.target if isinstance(self.target, Path) else None

    def __str__(self) -> str:
        """The store, named for messages: the file, or the URL without its password."""
        if isinstance(self.target, Path):
            return str(self.target)
        scheme, _, rest = self.target.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"


@dataclass(frozen=True, slots=True)
class Policy:
    """Which names one caller may see and call: those an `allow` glob matches (all without `allow`),
    and no `deny` glob does. `token` is the key naming it: a principal, or `group:NAME`."""

    token: str
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    def admits(self, name: str) -> bool:
        if self.allow is not None and not any(covers(glob, name) for glob in self.allow):
            return False
        return not any(covers(glob, name) for glob in self.deny)

    def describe(self) -> str:
        parts = [] if self.allow is None else [f"allow {list(self.allow)}"]
        if self.deny:
            parts.append(f"deny {list(self.deny)}")
        return f"auth.policies.{self.token} ({', '.join(parts)})"


def covers(glob: str, name: str) -> bool:
    """Whether a policy's glob covers `name` (`server.tool`, a capability, `server:resources/read`, ...).

    A glob over a whole server, `evil.*` or `evil:*`, covers all it offers alike: its tools
    (`evil.tool`), resources, prompts, completions and subscriptions (`evil:resources/read`, ...).
    """
    if fnmatch.fnmatchcase(name, glob):
        return True
    if len(glob) < 3 or glob[-1] != "*" or glob[-2] not in ".:":
        return False
    cut = min((at for at in (name.find("."), name.find(":")) if at > 0), default=-1)
    return cut > 0 and fnmatch.fnmatchcase(name[:cut], glob[:-2])


@dataclass(frozen=True, slots=True)
class Limit:
    """A token bucket: `burst` calls at once, refilled at `calls_per_minute`."""

    calls_per_minute: float
    burst: int


@dataclass(frozen=True, slots=True)
class RateLimits:
    per_token: Limit | None = None
    per_tool: Mapping[str, Limit] | None = None
    per_principal: Mapping[str, Limit] | None = None


# --- building them --------------------------------------------------------------------------------------


def audit_spec(raw: RawAudit, folder: Path) -> AuditSpec:
    if (raw.db is None) == (raw.db_url is None):
        raise ConfigError(
            "audit", 'expected exactly one of "db" (a SQLite file) or "db_url" (a postgresql:// URL)'
        )
    key = None if raw.signing_key is None else folder / raw.signing_key
    if raw.db_url is not None:
        if key is None:
            raise ConfigError(
                "audit.signing_key",
                "required with db_url: every process sharing a PostgreSQL store must sign its log with one "
                "key, and there is no database folder to keep one in; make one with `colibri key generate "
                "--name NAME --out FILE` and name FILE here",
            )
        return AuditSpec(raw.db_url, key)
    assert raw.db is not None
    return AuditSpec(folder / raw.db, key)


def policies(raw: Mapping[str, RawPolicy]) -> dict[str, Policy]:
    check_callers(raw, ("auth", "policies"))
    built = {}
    for token, policy in raw.items():
        if policy.allow is None and policy.deny is None:
            raise ConfigError(
                json_path(("auth", "policies", token)), 'expected "allow" and/or "deny", each a list of globs'
            )
        built[token] = Policy(
            token, None if policy.allow is None else tuple(policy.allow), tuple(policy.deny or ())
        )
    return built


def rate_limits(raw: RawRateLimits, known: Callable[[str], bool]) -> RateLimits:
    per_tool = {}
    for name, limit in raw.per_tool.items():
        # A glob (`open.*`, `*.search`) is checked by `unmatched`: one that matches nothing is a warning.
        if not any(char in name for char in "*?[") and not known(name):
            raise ConfigError(
                f'rate_limits.per_tool["{name}"]',
                "expected a tool as the switchboard lists it: server.tool (a configured server), a "
                "fallback capability, or server:METHOD (resources/read, prompts/get, completion/complete, "
                "resources/subscribe, resources/unsubscribe, logging/setLevel, subscriptions/listen)",
            )
        per_tool[name] = _limit(limit)
    check_callers(raw.per_principal, ("rate_limits", "per_principal"))
    per_principal = {name: _limit(limit) for name, limit in raw.per_principal.items()}
    return RateLimits(None if raw.per_token is None else _limit(raw.per_token), per_tool, per_principal)


def _limit(raw: RawLimit) -> Limit:
    return Limit(raw.calls_per_minute, raw.burst or max(1, int(raw.calls_per_minute)))


def unmatched(
    servers: Iterable[str],
    capabilities: Iterable[str],
    policies: Mapping[str, Policy],
    limits: RateLimits,
    listed: Mapping[str, Iterable[str]] | None = None,
) -> list[str]:
    """One warning line for each policy glob and `per_tool` key that matches nothing.

    At load (`listed` None): nothing the config holds — no configured server answers its server
    part (before the first `.` or `:`) and no fallback capability its whole. Tools are not listed
    yet, so a glob over a server's tools (`open.*`) is judged by the server alone; a key naming an
    unknown server exactly is an error already (`rate_limits`).

    Once servers have listed their tools (`listed`: each one's tool names): a key whose server part
    names configured servers, all of which have listed, and that matches none of their tools
    (`server.tool`) nor what else they are asked (`server:METHOD`) — `open.serach` of a server that
    lists `search`. Keys whose servers have not all listed yet are left for later.
    """
    servers, capabilities = list(servers), list(capabilities)
    found: list[tuple[str, str, str, Callable[[str, str], bool]]] = [
        (f"auth.policies.{token}.{field}: {glob!r}", glob, "admits" if field == "allow" else "denies", covers)
        for token, policy in policies.items()
        for field, globs in (("allow", policy.allow or ()), ("deny", policy.deny))
        for glob in globs
    ]
    found += [
        (f'rate_limits.per_tool["{key}"]', key, "limits", lambda key, name: fnmatch.fnmatchcase(name, key))
        for key in limits.per_tool or {}
    ]
    lines = []
    for where, glob, does, matches in found:
        if any(fnmatch.fnmatchcase(name, glob) for name in capabilities):
            continue
        cut = min((at for at in (glob.find("."), glob.find(":")) if at >= 0), default=len(glob))
        named = [name for name in servers if fnmatch.fnmatchcase(name, glob[:cut])]
        if listed is None:
            if not named:
                lines.append(f"{where} matches no configured server or capability; it {does} nothing")
            continue
        if not named or any(name not in listed for name in named):
            continue
        names = [f"{server}.{tool}" for server in named for tool in listed[server]]
        names += [f"{server}:{method}" for server in named for method in SERVER_METHODS]
        if not any(matches(glob, name) for name in names):
            lists = "lists" if len(named) == 1 else "list"
            lines.append(f"{where} matches none of the tools {', '.join(named)} {lists}; it {does} nothing")
    return lines
