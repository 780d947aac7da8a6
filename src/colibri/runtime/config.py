"""Configuration, read once from `COLIBRI_*` variables at the entry point."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from colibri.core.env import DEFAULT_MAX_MESSAGE_BYTES, ConfigError, max_message_bytes, path_list
from colibri.core.env import choice as _choice
from colibri.core.modes import Mode
from colibri.serving.logs import LogLevel, level_from_env

__all__ = ["Config", "ConfigError", "DbSync", "LogLevel"]


class DbSync(StrEnum):
    NORMAL = "normal"
    FULL = "full"


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
        skills_dirs = path_list(env, "COLIBRI_SKILLS_DIR")
        return cls(
            mode=mode,
            db_path=db_path,
            skills_dirs=skills_dirs,
            log_level=level_from_env(env),
            db_sync=_choice(env, "COLIBRI_DB_SYNC", DbSync, "normal"),
            max_message_bytes=max_message_bytes(env),
        )
