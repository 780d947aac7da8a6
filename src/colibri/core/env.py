"""Reading `COLIBRI_*` variables, one way everywhere: a choice among fixed values, a path list,
the message size limit both programs share, what both read for the store they write and its
log (COLIBRI_DB_SYNC, COLIBRI_LOG_ORIGIN, a number of seconds, an optional path), and the one rule
for the folder of a SQLite file about to be created. `KNOWN_VARIABLES` names every `COLIBRI_*`
variable any part of Colibri reads, so a misspelt one is warned about instead of silently ignored."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)

MAX_MESSAGE_VARIABLE = "COLIBRI_MAX_MESSAGE_BYTES"

# Every COLIBRI_* variable read anywhere, the COLIBRI_HTTP_* limits (serving/http_limits.py) too. A
# test holds every name in the source to this list, and the docs' build holds
# docs/reference/environment.md to it.
KNOWN_VARIABLES = frozenset(
    {
        "COLIBRI_MODE",
        "COLIBRI_DB_PATH",
        "COLIBRI_DB_URL",
        "COLIBRI_DB_SYNC",
        "COLIBRI_SKILLS_DIR",
        "COLIBRI_LOG_LEVEL",
        MAX_MESSAGE_VARIABLE,
        "COLIBRI_SIGNING_KEY",
        "COLIBRI_LOG_ORIGIN",
        "COLIBRI_CHECKPOINT_INTERVAL_S",
        "COLIBRI_CHECKPOINT_EXPORT",
        "COLIBRI_WITNESS_POLICY",
        "COLIBRI_HTTP_SESSION_IDLE_S",
        "COLIBRI_HTTP_MAX_SESSIONS",
        "COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL",
        "COLIBRI_HTTP_HEADER_TIMEOUT_S",
        "COLIBRI_HTTP_MAX_CONNECTIONS",
        "COLIBRI_HTTP_MAX_BODY_BYTES",
        "COLIBRI_HTTP_MAX_FORM_BYTES",
        "COLIBRI_HTTP_BODY_TIMEOUT_S",
        "COLIBRI_PRINCIPAL",
        "COLIBRI_OAUTH_ISSUER",
        "COLIBRI_OAUTH_CLIENT_SECRET",
        "COLIBRI_TRUSTED_GATEWAYS",  # the gateways whose on-behalf-of statements are taken (§20)
    }
)
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class ConfigError(ValueError):
    """A `COLIBRI_*` variable holds a value Colibri cannot use."""

    def __init__(self, variable: str, value: str, valid: list[str]) -> None:
        self.variable = variable
        super().__init__(f"{variable}={value!r} is not valid; use one of: {', '.join(valid)}")


class DbSync(StrEnum):
    """COLIBRI_DB_SYNC: how a SQLite store commits (SPEC §1.7)."""

    NORMAL = "normal"
    FULL = "full"


def choice(env: Mapping[str, str], variable: str, enum: type[E], default: str, *, upper: bool = False) -> E:
    """The member of `enum` that `variable` names (case-insensitive), or `default` when unset."""
    raw = env.get(variable) or default
    value = raw.strip().upper() if upper else raw.strip().lower()
    try:
        return enum(value)
    except ValueError:
        raise ConfigError(variable, raw, [member.value for member in enum]) from None


def path_list(env: Mapping[str, str], variable: str) -> tuple[Path, ...] | None:
    """Paths separated by `os.pathsep`; None when the variable is unset or empty."""
    raw = env.get(variable)
    return tuple(Path(p) for p in raw.split(os.pathsep) if p) if raw else None


def max_message_bytes(env: Mapping[str, str]) -> int:
    """COLIBRI_MAX_MESSAGE_BYTES: the longest JSON-RPC line either program reads (both use it)."""
    raw = env.get(MAX_MESSAGE_VARIABLE) or str(DEFAULT_MAX_MESSAGE_BYTES)
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or not 1024 <= int(text) <= 2**31:
        raise ConfigError(MAX_MESSAGE_VARIABLE, raw, ["a whole number of bytes from 1024 to 2147483648"])
    return int(text)


def optional_path(env: Mapping[str, str], variable: str) -> Path | None:
    raw = env.get(variable)
    return Path(raw) if raw else None


def log_origin(env: Mapping[str, str]) -> str | None:
    """COLIBRI_LOG_ORIGIN: one line of printable text; None when unset (colibri/<database id>)."""
    raw = env.get("COLIBRI_LOG_ORIGIN")
    if raw is None or raw == "":
        return None
    if not raw.strip() or not raw.isprintable():
        raise ConfigError("COLIBRI_LOG_ORIGIN", raw, ["one line of printable text, e.g. example.com/colibri"])
    return raw


_PRINCIPAL_NAME = re.compile(r"[A-Za-z0-9._@-]{1,64}")


def local_principal(env: Mapping[str, str]) -> str:
    """COLIBRI_PRINCIPAL=NAME: the stdio caller's principal, `local:NAME` (SPEC §20); `local` when
    unset. Unauthenticated, so it only labels: the `local:` prefix keeps it apart from every token's
    name (no token may hold a `:`, core/principals.py)."""
    raw = env.get("COLIBRI_PRINCIPAL")
    if raw is None or raw == "":
        return "local"
    if _PRINCIPAL_NAME.fullmatch(raw) is None:
        raise ConfigError(
            "COLIBRI_PRINCIPAL", raw, ["a name of 1 to 64 letters, digits, '.', '_', '-' or '@', e.g. ana"]
        )
    return f"local:{raw}"


def seconds(env: Mapping[str, str], variable: str, default: float) -> float:
    """A number of seconds greater than 0 (and finite); `default` when unset or blank."""
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ConfigError(variable, raw, ["a number of seconds greater than 0, e.g. 60"])
    return value


def missing_db_folder(path: Path) -> str | None:
    """Why a new SQLite file at `path` cannot be made, or None: only the file's own folder is ever
    created, and only when the folder above it exists. So the default `data/colibri.db` works in any
    working folder, while a mistyped path (a whole tree that is not there) is refused, not made.
    The words end with the first fix; the caller adds its own alternative after "or"."""
    folder = path.parent
    if folder.is_dir() or folder.parent.is_dir():
        return None
    return (
        f"the folder {folder} does not exist, nor {folder.parent} above it: "
        f"create it first (mkdir -p {folder})"
    )


_PREFIX = len("COLIBRI_")


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One warning line per `COLIBRI_*` variable in `env` that nothing reads, naming the known
    variable it most resembles (a misspelt name would otherwise go unnoticed)."""
    warnings = []
    for name in sorted(env):
        if not name.startswith("COLIBRI_") or name in KNOWN_VARIABLES:
            continue
        # Compared without the prefix all share, which would make any name look close to some.
        close = difflib.get_close_matches(name[_PREFIX:], [known[_PREFIX:] for known in KNOWN_VARIABLES], n=1)
        hint = (
            f"did you mean COLIBRI_{close[0]}?"
            if close
            else "docs/reference/environment.md lists the known ones"
        )
        warnings.append(f"colibri: warning: {name} is not a Colibri variable and is ignored; {hint}")
    return warnings
