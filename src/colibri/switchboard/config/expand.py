"""`${VAR}` and `${VAR:-default}` in the fields of a server entry that name things to start or reach.

Expansion happens on the raw JSON before validation, so a secret stays in the environment and the
file can be shared. An unset variable without a default is a config error naming it and its path.
`$$` is not special: a literal `${` cannot be written, which no known config needs.

The values put in are kept per server (`Expanded.hidden`), so that nothing the switchboard says
about that server — status, errors, logs — can repeat one (SPEC §14: secrets stay secret).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.envfile import read_env_file
from colibri.switchboard.config.model import ServerSpec

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
EXPANDED_KEYS = ("command", "args", "env", "url", "headers")
PRINCIPAL = "PRINCIPAL"
PRINCIPAL_REF = "${PRINCIPAL}"
# A principal's name as it may go into a file name: no path separator, no leading dot.
PRINCIPAL_IN_PATH = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9_@+.-]*$")
# What an isolated server's shared process (health checks, listing) goes by: the switchboard's own
# name, which no token may have (SPEC §20); it reads no principal's envFile.
SHARED = "switchboard"


@dataclass(frozen=True, slots=True)
class Expanded:
    """The file with its server entries expanded, and per server the values the environment put in."""

    raw: dict[str, Any]
    hidden: Mapping[str, frozenset[str]]


def expand_servers(raw: dict[str, Any], environ: Mapping[str, str] | None = None) -> Expanded:
    """A copy of the file whose server entries have their variables expanded."""
    servers = raw.get("mcpServers")
    if not isinstance(servers, dict):
        return Expanded(raw, {})
    env = os.environ if environ is None else environ
    expanded: dict[str, Any] = {}
    hidden: dict[str, frozenset[str]] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            expanded[name] = entry
            continue
        copy, put_in = dict(entry), set[str]()
        # An isolated entry's ${PRINCIPAL} is expanded per principal, when its process starts.
        entry_env = {**env, PRINCIPAL: PRINCIPAL_REF} if entry.get("isolate") == "principal" else env
        for key in EXPANDED_KEYS:
            if key in copy:
                copy[key] = _value(copy[key], ("mcpServers", name, key), entry_env, put_in)
        expanded[name] = copy
        hidden[name] = frozenset(put_in)
    return Expanded({**raw, "mcpServers": expanded}, hidden)


def _value(value: Any, where: tuple[Any, ...], env: Mapping[str, str], put_in: set[str]) -> Any:
    if isinstance(value, str):
        return expand(value, where, env, put_in)
    if isinstance(value, list):
        return [_value(item, (*where, index), env, put_in) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _value(item, (*where, key), env, put_in) for key, item in value.items()}
    return value


def expand(text: str, where: tuple[Any, ...], env: Mapping[str, str], put_in: set[str] | None = None) -> str:
    """`text` with every `${VAR}` / `${VAR:-default}` replaced from `env`; the environment's values
    that went in are added to `put_in` (defaults are in the file already: no secret)."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is not None and (value or default is None):
            if put_in is not None and value:
                put_in.add(value)
            return value
        if default is not None:
            return default
        raise ConfigError(
            json_path(where),
            f"environment variable {name} is not set; set it, or write ${{{name}:-default}} in the file",
        )

    return VARIABLE.sub(replace, text)


def for_principal(spec: ServerSpec, principal: str | None) -> ServerSpec:
    """The isolated server `spec` as `principal`'s own process starts it: `${PRINCIPAL}` in its env and
    envFile path is the principal's name. None is the shared process, which reads no envFile that
    names a principal. Raises ValueError (naming the entry, never a value) when it cannot start."""
    if principal is not None and not PRINCIPAL_IN_PATH.match(principal):
        raise ValueError(f"{spec.name}: the principal's name cannot name its own process's envFile")
    name = SHARED if principal is None else principal
    env = {key: value.replace(PRINCIPAL_REF, name) for key, value in spec.env.items()}
    from_file: dict[str, str] = {}
    if spec.env_file is not None and principal is not None:
        path = Path(spec.env_file.replace(PRINCIPAL_REF, name))
        try:
            from_file = read_env_file(spec.name, path.name, path.parent)
        except ConfigError as exc:
            raise ValueError(f"{spec.name}: cannot start {name}'s process: {exc.message}") from None
        env = {**from_file, **env}
    secrets = {value for value in from_file.values() if value}
    return replace(spec, env=MappingProxyType(env), hidden=spec.hidden | secrets)
