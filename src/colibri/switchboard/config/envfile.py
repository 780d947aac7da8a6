"""A server entry's `envFile`: environment variables for its process, from a dotenv file.

The path is relative to the config file (as Cursor reads it); the file is read at load, so a
missing or unreadable one stops the start (exit 2) naming the entry — never its contents, which
are secrets by nature. `env` in the entry wins over the file for the same name. `${VAR}` inside the
file expands from the switchboard's own environment, as python-dotenv does.
"""

from __future__ import annotations

from pathlib import Path

from dotenv import dotenv_values

from colibri.switchboard.base import ConfigError, json_path


def read_env_file(name: str, relative: str, base: Path) -> dict[str, str]:
    """The variables of server `name`'s envFile `relative` (to the config file's folder `base`)."""
    where = json_path(("mcpServers", name, "envFile"))
    path = base / relative
    if not path.is_file():
        raise ConfigError(
            where, f"no such file {relative!r} (relative to the config file); expected a dotenv file"
        )
    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            where, f"cannot read {relative!r} ({type(exc).__name__}); expected a UTF-8 dotenv file"
        ) from None
    # A bare `NAME` line has no value (None): it sets nothing, as in a shell's env file.
    return {key: value for key, value in values.items() if value is not None}
