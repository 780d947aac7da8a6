"""`${VAR}` and `${VAR:-default}` in the fields of a server entry that name things to start or reach.

Expansion happens on the raw JSON before validation, so a secret stays in the environment and the
file can be shared. An unset variable without a default is a config error naming it and its path.
`$$` is not special: a literal `${` cannot be written, which no known config needs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from colibri.switchboard.base import ConfigError, json_path

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
EXPANDED_KEYS = ("command", "args", "env", "url", "headers")


def expand_servers(raw: dict[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A copy of the file whose server entries have their variables expanded."""
    servers = raw.get("mcpServers")
    if not isinstance(servers, dict):
        return raw
    env = os.environ if environ is None else environ
    expanded: dict[str, Any] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            expanded[name] = entry
            continue
        copy = dict(entry)
        for key in EXPANDED_KEYS:
            if key in copy:
                copy[key] = _value(copy[key], ("mcpServers", name, key), env)
        expanded[name] = copy
    return {**raw, "mcpServers": expanded}


def _value(value: Any, where: tuple[Any, ...], env: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return expand(value, where, env)
    if isinstance(value, list):
        return [_value(item, (*where, index), env) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _value(item, (*where, key), env) for key, item in value.items()}
    return value


def expand(text: str, where: tuple[Any, ...], env: Mapping[str, str]) -> str:
    """`text` with every `${VAR}` / `${VAR:-default}` replaced from `env`."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        raise ConfigError(
            json_path(where),
            f"environment variable {name} is not set; set it, or write ${{{name}:-default}} in the file",
        )

    return VARIABLE.sub(replace, text)
