"""Configuration, read once from `COLIBRI_*` variables at the entry point."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from colibri.runtime.modes import Mode

E = TypeVar("E", bound=StrEnum)

MAX_MESSAGE_VARIABLE = "COLIBRI_MAX_MESSAGE_BYTES"
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class LogLevel(StrEnum):
    ERROR = "error"
    WARN = "warn"
    INFO = "info"
    DEBUG = "debug"


class DbSync(StrEnum):
    NORMAL = "normal"
    FULL = "full"


class ConfigError(ValueError):
    """A `COLIBRI_*` variable holds a value Colibri cannot use."""

    def __init__(self, variable: str, value: str, valid: list[str]) -> None:
        self.variable = variable
        super().__init__(f"{variable}={value!r} is not valid; use one of: {', '.join(valid)}")


@dataclass(frozen=True, slots=True)
class Config:
    mode: Mode = Mode.FULL
    db_path: Path = Path("data/colibri.db")
    skills_dirs: tuple[Path, ...] | None = None  # None: the default roots of SPEC §6
    log_level: LogLevel = LogLevel.INFO
    db_sync: DbSync = DbSync.NORMAL
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        mode = _choice(env, "COLIBRI_MODE", Mode, "FULL", upper=True)
        default_db = "data/colibri.test.db" if mode is Mode.TEST else "data/colibri.db"
        db_path = Path(env.get("COLIBRI_DB_PATH") or default_db)
        skills = env.get("COLIBRI_SKILLS_DIR")
        skills_dirs = tuple(Path(p) for p in skills.split(os.pathsep) if p) if skills else None
        return cls(
            mode=mode,
            db_path=db_path,
            skills_dirs=skills_dirs,
            log_level=_choice(env, "COLIBRI_LOG_LEVEL", LogLevel, "info"),
            db_sync=_choice(env, "COLIBRI_DB_SYNC", DbSync, "normal"),
            max_message_bytes=max_message_bytes(env),
        )


def max_message_bytes(env: Mapping[str, str]) -> int:
    """COLIBRI_MAX_MESSAGE_BYTES: the longest JSON-RPC line either program reads (both use it)."""
    raw = env.get(MAX_MESSAGE_VARIABLE) or str(DEFAULT_MAX_MESSAGE_BYTES)
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or not 1024 <= int(text) <= 2**31:
        raise ConfigError(MAX_MESSAGE_VARIABLE, raw, ["a whole number of bytes from 1024 to 2147483648"])
    return int(text)


def _choice(env: Mapping[str, str], variable: str, enum: type[E], default: str, *, upper: bool = False) -> E:
    raw = env.get(variable) or default
    value = raw.strip().upper() if upper else raw.strip().lower()
    try:
        return enum(value)
    except ValueError:
        raise ConfigError(variable, raw, [member.value for member in enum]) from None
