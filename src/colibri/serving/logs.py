"""Logging goes to stderr, always: stdout belongs to JSON-RPC. One parser for COLIBRI_LOG_LEVEL."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from enum import StrEnum

from colibri.core.env import choice


class LogLevel(StrEnum):
    ERROR = "error"
    WARN = "warn"
    INFO = "info"
    DEBUG = "debug"


_LEVELS = {
    LogLevel.ERROR: logging.ERROR,
    LogLevel.WARN: logging.WARNING,
    LogLevel.INFO: logging.INFO,
    LogLevel.DEBUG: logging.DEBUG,
}


def level_from_env(env: Mapping[str, str] | None = None) -> LogLevel:
    """COLIBRI_LOG_LEVEL (default info); `ConfigError` names the valid levels."""
    return choice(os.environ if env is None else env, "COLIBRI_LOG_LEVEL", LogLevel, "info")


def configure(level: LogLevel) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("colibri").setLevel(_LEVELS[level])
