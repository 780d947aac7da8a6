from __future__ import annotations

import os
from pathlib import Path

import pytest

from colibri.core.modes import Mode
from colibri.runtime.config import Config, ConfigError, DbSync, LogLevel


def test_defaults() -> None:
    config = Config.from_env({})
    assert config == Config(Mode.FULL, Path("data/colibri.db"), None, LogLevel.INFO, DbSync.NORMAL)


def test_test_mode_has_its_own_database() -> None:
    assert Config.from_env({"COLIBRI_MODE": "test"}).db_path == Path("data/colibri.test.db")


def test_values_are_case_insensitive_and_trimmed() -> None:
    config = Config.from_env(
        {"COLIBRI_MODE": " readonly ", "COLIBRI_LOG_LEVEL": "DEBUG", "COLIBRI_DB_SYNC": "Full"}
    )
    assert (config.mode, config.log_level, config.db_sync) == (Mode.READONLY, LogLevel.DEBUG, DbSync.FULL)


def test_skill_roots_split_on_pathsep() -> None:
    config = Config.from_env({"COLIBRI_SKILLS_DIR": os.pathsep.join(["/a", "", "/b"])})
    assert config.skills_dirs == (Path("/a"), Path("/b"))


@pytest.mark.parametrize(
    ("variable", "value", "valid"),
    [
        ("COLIBRI_MODE", "ADMIN", "FULL, READONLY, TEST, MINIMAL"),
        ("COLIBRI_LOG_LEVEL", "chatty", "error, warn, info, debug"),
        ("COLIBRI_DB_SYNC", "off", "normal, full"),
        ("COLIBRI_CHECKPOINT_INTERVAL_S", "soon", "a number of seconds greater than 0, e.g. 60"),
        ("COLIBRI_CHECKPOINT_INTERVAL_S", "0", "a number of seconds greater than 0, e.g. 60"),
        ("COLIBRI_CHECKPOINT_INTERVAL_S", "inf", "a number of seconds greater than 0, e.g. 60"),
        ("COLIBRI_LOG_ORIGIN", "two\nlines", "one line of printable text, e.g. example.com/colibri"),
    ],
)
def test_invalid_values_name_variable_value_and_choices(variable: str, value: str, valid: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Config.from_env({variable: value})
    assert str(caught.value) == f"{variable}={value!r} is not valid; use one of: {valid}"
