"""Configuration, read once from `COLIBRI_*` variables at the entry point."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from colibri.core.env import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ConfigError,
    DbSync,
    local_principal,
    log_origin,
    max_message_bytes,
    missing_db_folder,
    optional_path,
    path_list,
    seconds,
)
from colibri.core.env import choice as _choice
from colibri.core.modes import Mode, writes_allowed
from colibri.runtime.gateways import trusted_gateways
from colibri.serving.logs import LogLevel, level_from_env

if TYPE_CHECKING:
    from colibri.domains.access.on_behalf import TrustedKeys

__all__ = ["Config", "ConfigError", "DbSync", "LogLevel"]


@dataclass(frozen=True, slots=True)
class Config:
    mode: Mode = Mode.FULL
    db_path: Path = Path("data/colibri.db")
    skills_dirs: tuple[Path, ...] | None = None  # None: the default roots of SPEC §6
    log_level: LogLevel = LogLevel.INFO
    db_sync: DbSync = DbSync.NORMAL
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    signing_key: Path | None = None  # COLIBRI_SIGNING_KEY; None: colibri.key beside the database
    log_origin: str | None = None  # COLIBRI_LOG_ORIGIN; None: colibri/<the database's id>
    checkpoint_interval_s: float = 60.0
    checkpoint_export: Path | None = None
    db_url: str | None = None  # COLIBRI_DB_URL: a postgresql:// URL chooses PostgreSQL over db_path
    witness_policy: Path | None = None  # COLIBRI_WITNESS_POLICY: the witnesses checkpoints go to (§16)
    local_principal: str = "local"  # COLIBRI_PRINCIPAL=NAME: `local:NAME`, the stdio caller (§20)
    # COLIBRI_TRUSTED_GATEWAYS: whose on-behalf-of statements name a call's principal (§20)
    trusted_gateways: TrustedKeys | None = None

    @property
    def db_target(self) -> Path | str:
        """What `open_database` opens: the PostgreSQL URL when one is set, else the SQLite file."""
        return self.db_url or self.db_path

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        mode = _choice(env, "COLIBRI_MODE", Mode, "FULL", upper=True)
        default_db = "data/colibri.test.db" if mode is Mode.TEST else "data/colibri.db"
        raw_path = env.get("COLIBRI_DB_PATH") or default_db
        if "://" in raw_path:
            # Taken as a file name it would quietly make a SQLite file named `postgresql:/...` here.
            raise ConfigError(
                "COLIBRI_DB_PATH",
                raw_path,
                ["a SQLite file path; a postgresql:// URL goes in COLIBRI_DB_URL instead"],
            )
        db_path = Path(raw_path)
        skills_dirs = path_list(env, "COLIBRI_SKILLS_DIR")
        db_url = env.get("COLIBRI_DB_URL") or None
        if db_url is not None and not db_url.startswith(("postgresql://", "postgres://")):
            raise ConfigError("COLIBRI_DB_URL", db_url, ["a postgresql://... URL (SQLite: COLIBRI_DB_PATH)"])
        return cls(
            mode=mode,
            db_path=db_path,
            skills_dirs=skills_dirs,
            log_level=level_from_env(env),
            db_sync=_choice(env, "COLIBRI_DB_SYNC", DbSync, "normal"),
            db_url=db_url,
            max_message_bytes=max_message_bytes(env),
            signing_key=optional_path(env, "COLIBRI_SIGNING_KEY"),
            log_origin=log_origin(env),
            checkpoint_interval_s=seconds(env, "COLIBRI_CHECKPOINT_INTERVAL_S", 60.0),
            checkpoint_export=optional_path(env, "COLIBRI_CHECKPOINT_EXPORT"),
            witness_policy=optional_path(env, "COLIBRI_WITNESS_POLICY"),
            local_principal=local_principal(env),
            trusted_gateways=trusted_gateways(env),
        )


def signing_key_problem(config: Config) -> str | None:
    """Why this server must not start with this configuration's signing key, or None.

    Without COLIBRI_SIGNING_KEY, FULL and TEST make colibri.key beside the SQLite file. A
    PostgreSQL store has no such place: a key made in each replica's working folder would sign
    the one shared log with a different key per machine.
    """
    if config.db_url is None or config.signing_key is not None or config.mode not in (Mode.FULL, Mode.TEST):
        return None
    return (
        "COLIBRI_DB_URL is set but COLIBRI_SIGNING_KEY is not: every replica sharing a PostgreSQL "
        "database must sign the one log with the same key, and there is no database folder to keep "
        "one in. Make one with `colibri key generate --name NAME --out FILE`, keep FILE off the "
        "database machine, and set COLIBRI_SIGNING_KEY=FILE on every replica"
    )


def database_folder_problem(config: Config) -> str | None:
    """Why the SQLite file this configuration would create has no folder to go in, or None (SPEC §14:
    one line at start-up, exit 2, not a boot failure found in phase 2). Only a mode that writes
    creates the file; elsewhere a missing file is phase 2's to report."""
    if config.db_url is not None or not writes_allowed(config.mode):
        return None
    missing = missing_db_folder(config.db_path)
    if missing is None:
        return None
    return (
        f"COLIBRI_DB_PATH={config.db_path}: {missing}, "
        "or point COLIBRI_DB_PATH at a file in an existing folder"
    )
