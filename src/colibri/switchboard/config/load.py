"""The switchboard's config file: the `mcpServers` JSON plus `fallbacks`, `health`, `auth` (SPEC §7, §12).

Entries written for other clients load too: `type`, `headers`, `disabled`, `timeout` (milliseconds)
and `envFile` (envfile.py) are understood; `autoApprove`, `alwaysAllow` and `description` concern
only a client and are ignored, and so are other clients' top-level keys (foreign.py).
`${VAR}` / `${VAR:-default}` expand from the environment first (see `expand.py`).

`load(path)` returns a frozen `SwitchboardConfig` (model.py) or raises `ConfigError` naming the JSON
path of the first problem and what was expected there. Pydantic checks the shapes (schema.py); the
cross-field rules (a server needs `command` or `url`, fallback targets must name configured servers,
...) are checked afterwards.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from colibri.domains.access.api import StatementKey, read_statement_key
from colibri.serving.oauth import OAuthSettings
from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config import gateway
from colibri.switchboard.config.approvals import approvals
from colibri.switchboard.config.envfile import read_env_file
from colibri.switchboard.config.exchange import exchange_settings
from colibri.switchboard.config.expand import PRINCIPAL_REF, expand, expand_servers
from colibri.switchboard.config.foreign import set_aside
from colibri.switchboard.config.model import (
    NAME_PATTERN,
    STATUS_TOOL,
    DeepCheck,
    HealthPolicy,
    ServerSpec,
    SwitchboardConfig,
    Target,
)
from colibri.switchboard.config.oauth import oauth_settings
from colibri.switchboard.config.schema import RawFile, RawServer, first_problem, kind
from colibri.switchboard.config.search import tool_search

_path = json_path
IDLE_S = 300.0  # an isolated server's process stops after this long without calls (SPEC §21)


def load(path: str | Path, environ: Mapping[str, str] | None = None) -> SwitchboardConfig:
    """Read, parse and validate the config file at `path`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("$", f"cannot read the file ({exc}); expected a readable UTF-8 JSON file") from None
    return parse(text, environ, folder=Path(path).parent)


def parse(
    text: str, environ: Mapping[str, str] | None = None, *, folder: Path | None = None
) -> SwitchboardConfig:
    """Validate the text of a config file, expanding variables from `environ` (default: os.environ);
    relative paths in it (`envFile`s, the audit store) are relative to `folder` (default: the working
    directory)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            "$", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; expected a JSON object"
        ) from None
    if not isinstance(raw, dict):
        raise ConfigError("$", f'expected a JSON object with "mcpServers", got {kind(raw)}')
    expanded = expand_servers(set_aside(raw, RawFile.model_fields), environ)
    try:
        parsed = RawFile.model_validate(_expand_audit(expanded.raw, environ))
    except ValidationError as exc:
        raise first_problem(exc) from None
    auth = parsed.auth
    oauth = None
    if auth is not None and auth.oauth is not None:
        oauth = oauth_settings(auth.oauth, os.environ if environ is None else environ)
    if auth is not None and auth.tokens_file is None and oauth is None:
        raise ConfigError(
            "auth", 'expected "tokens_file", "oauth" or both: who may call through the switchboard'
        )
    return _build(parsed, expanded.hidden, Path.cwd() if folder is None else folder, oauth)


def _build(
    parsed: RawFile, hidden: Mapping[str, frozenset[str]], folder: Path, oauth: OAuthSettings | None = None
) -> SwitchboardConfig:
    globals_ = parsed.health.model_dump(exclude_none=True)
    _check_cooldowns(HealthPolicy(**globals_), "health")
    servers = tuple(
        _server(name, entry, globals_, hidden.get(name, frozenset()), folder, oauth=oauth)
        for name, entry in parsed.mcpServers.items()
    )
    known = {spec.name for spec in servers}
    enabled = {spec.name for spec in servers if not spec.disabled}
    fallbacks = {
        capability: tuple(_target(capability, index, entry, known) for index, entry in enumerate(chain))
        for capability, chain in parsed.fallbacks.items()
    }
    # A disabled server is not started, so it cannot serve a fallback; a chain left empty goes.
    fallbacks = {
        capability: kept
        for capability, chain in fallbacks.items()
        if (kept := tuple(target for target in chain if target.server in enabled))
    }
    for capability in fallbacks:
        if not NAME_PATTERN.match(capability) or capability == STATUS_TOOL:
            raise ConfigError(
                _path(("fallbacks", capability)),
                "expected a capability name of 1-64 letters, digits, '_' or '-' "
                f"(no dots, not {STATUS_TOOL!r}), so it cannot clash with a namespaced tool",
            )
    startup = {} if parsed.startup_wait_s is None else {"startup_wait_s": parsed.startup_wait_s}
    audit = None if parsed.audit is None else gateway.audit_spec(parsed.audit, folder)
    if audit is None and parsed.pins not in (None, "off"):
        raise ConfigError(
            "pins", 'needs an audit store, where the pins are kept: add "audit": {"db": "PATH"}'
        )
    return SwitchboardConfig(
        servers=servers,
        fallbacks=MappingProxyType(fallbacks),
        tokens_file=None if parsed.auth is None else parsed.auth.tokens_file,
        oauth=oauth,
        audit=audit,
        pins=parsed.pins or ("off" if audit is None else "block"),
        policies=MappingProxyType(gateway.policies({} if parsed.auth is None else parsed.auth.policies)),
        rate_limits=gateway.rate_limits(
            parsed.rate_limits or gateway.RawRateLimits(), lambda name: _names_a_tool(name, known, fallbacks)
        ),
        identity_key=_identity_key(parsed.identity_key, folder),
        approvals=approvals(parsed.approvals, audit is not None),
        tool_search=tool_search(parsed.tool_search, fallbacks),
        **startup,
    )


def _identity_key(raw: str | None, folder: Path) -> StatementKey | None:
    """The `identity_key` file (relative to the config's folder), read now: a file that is not a signer
    key is refused at load and at reload, never found out at the first call."""
    if raw is None:
        return None
    try:
        return read_statement_key(folder / raw)
    except ValueError as exc:
        raise ConfigError(
            "identity_key",
            f"{exc}; expected a signer key file, made by `colibri key generate --name NAME --out FILE` (each "
            "downstream Colibri trusts it by the line `colibri key show FILE` prints, in its "
            "COLIBRI_TRUSTED_GATEWAYS file)",
        ) from None


def _names_a_tool(name: str, servers: set[str], fallbacks: Mapping[str, object]) -> bool:
    """Whether `name` is something the switchboard routes: server.tool, a capability, server:method."""
    server, colon, method = name.partition(":")
    if colon:
        return server in servers and method in gateway.SERVER_METHODS
    server, dot, tool = name.partition(".")
    return name in fallbacks or (bool(dot) and bool(tool) and server in servers)


def _expand_audit(raw: dict[str, Any], environ: Mapping[str, str] | None) -> dict[str, Any]:
    """`${VAR}` in the audit store's URL, which may hold a password."""
    audit = raw.get("audit")
    if not isinstance(audit, dict) or not isinstance(audit.get("db_url"), str):
        return raw
    env = os.environ if environ is None else environ
    return {**raw, "audit": {**audit, "db_url": expand(audit["db_url"], ("audit", "db_url"), env)}}


def _server(
    name: str,
    entry: RawServer,
    globals_: dict[str, Any],
    hidden: frozenset[str],
    folder: Path,
    *,
    oauth: OAuthSettings | None = None,
) -> ServerSpec:
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
    if entry.url is not None and (entry.args or entry.env or entry.envFile or entry.cwd is not None):
        raise ConfigError(
            _path(where), '"args", "env", "envFile" and "cwd" apply to stdio servers only, not to a "url"'
        )
    isolated = _isolation(where, entry)
    per_principal = entry.envFile is not None and PRINCIPAL_REF in entry.envFile
    if per_principal and not isolated:
        raise ConfigError(
            _path((*where, "envFile")), '${PRINCIPAL} names a principal only with "isolate": "principal"'
        )
    # An envFile that names the principal is read as each principal's process starts (expand.py).
    from_file = {} if entry.envFile is None or per_principal else read_env_file(name, entry.envFile, folder)
    if entry.command is not None and entry.headers:
        raise ConfigError(_path((*where, "headers")), 'headers apply to "url" servers only')
    if entry.type is not None and (entry.type == "stdio") != (entry.command is not None):
        expected = (
            '"stdio" with "command"'
            if entry.command is not None
            else '"http", "streamable-http" or "sse" with "url"'
        )
        raise ConfigError(_path((*where, "type")), f"expected {expected}, got {entry.type!r}")
    own = entry.health.model_dump(exclude_none=True, exclude={"deep"})
    if entry.timeout is not None:
        if "call_timeout_s" in own:
            raise ConfigError(
                _path((*where, "timeout")),
                "expected either timeout (milliseconds) or health.call_timeout_s (seconds), not both",
            )
        own["call_timeout_s"] = entry.timeout / 1000
    policy = HealthPolicy(**{**globals_, **own})
    _check_cooldowns(policy, _path((*where, "health")) if own else "health")
    if entry.tools is not None and (entry.tools.allow is None) == (entry.tools.deny is None):
        raise ConfigError(
            _path((*where, "tools")), 'expected exactly one of "allow" or "deny", each a list of globs'
        )
    deep = entry.health.deep
    return ServerSpec(
        name=name,
        command=entry.command,
        args=tuple(entry.args),
        env=MappingProxyType({**from_file, **entry.env}),
        cwd=entry.cwd,
        url=entry.url,
        health=policy,
        deep=None
        if deep is None
        else DeepCheck(tool=deep.tool, arguments=MappingProxyType(dict(deep.arguments))),
        idempotent=frozenset(entry.idempotent),
        sse=entry.type == "sse",
        headers=MappingProxyType(dict(entry.headers)),
        disabled=entry.disabled,
        allow=None if entry.tools is None or entry.tools.allow is None else tuple(entry.tools.allow),
        deny=() if entry.tools is None or entry.tools.deny is None else tuple(entry.tools.deny),
        tool_timeouts=MappingProxyType(dict(entry.tool_timeouts)),
        hidden=hidden | {value for value in from_file.values() if value},
        isolate=isolated,
        idle_s=IDLE_S if entry.idle_s is None else entry.idle_s,
        env_file=str(folder / entry.envFile) if per_principal and entry.envFile is not None else None,
        exchange=exchange_settings(where, entry, oauth),
    )


def _isolation(where: tuple[str, str], entry: RawServer) -> bool:
    """Whether the entry runs a process per principal; its keys' cross-field rules (SPEC §21)."""
    if entry.isolate is not None and entry.command is None:
        raise ConfigError(
            _path((*where, "isolate")), 'applies to stdio servers ("command") only: a process per principal'
        )
    if entry.idle_s is not None and entry.isolate is None:
        raise ConfigError(_path((*where, "idle_s")), 'applies only with "isolate": "principal"')
    return entry.isolate is not None


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
