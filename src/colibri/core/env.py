"""Reading `COLIBRI_*` variables, one way everywhere: a choice among fixed values, a path list."""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


class ConfigError(ValueError):
    """A `COLIBRI_*` variable holds a value Colibri cannot use."""

    def __init__(self, variable: str, value: str, valid: list[str]) -> None:
        self.variable = variable
        super().__init__(f"{variable}={value!r} is not valid; use one of: {', '.join(valid)}")


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
