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
    signing_key: Path | None = None  # COLIBRI_SIGNING_KEY; None: colibri.key beside the database
    log_origin: str | None = None  # COLIBRI_LOG_ORIGIN; None: colibri/<the database's id>
    checkpoint_interval_s: float = 60.0
    checkpoint_export: Path | None = None

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
            signing_key=_path(env, "COLIBRI_SIGNING_KEY"),
            log_origin=_origin(env),
            checkpoint_interval_s=_seconds(env, "COLIBRI_CHECKPOINT_INTERVAL_S", 60.0),
            checkpoint_export=_path(env, "COLIBRI_CHECKPOINT_EXPORT"),
        )


def _choice(env: Mapping[str, str], variable: str, enum: type[E], default: str, *, upper: bool = False) -> E:
    raw = env.get(variable) or default
    value = raw.strip().upper() if upper else raw.strip().lower()
    try:
        return enum(value)
    except ValueError:
        raise ConfigError(variable, raw, [member.value for member in enum]) from None


def _path(env: Mapping[str, str], variable: str) -> Path | None:
    raw = env.get(variable)
    return Path(raw) if raw else None


def _origin(env: Mapping[str, str]) -> str | None:
    raw = env.get("COLIBRI_LOG_ORIGIN")
    if raw is None or raw == "":
        return None
    if not raw.strip() or not raw.isprintable():
        raise ConfigError("COLIBRI_LOG_ORIGIN", raw, ["one line of printable text, e.g. example.com/colibri"])
    return raw


def _seconds(env: Mapping[str, str], variable: str, default: float) -> float:
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
