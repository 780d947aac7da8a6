"""Runtime modes and admission: which class of tool runs in which mode.

Each tool declares its class where it is declared (`core/spec.py`); which tools a mode
admits follows from that and from this one table, never from a list of names.
"""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    FULL = "FULL"
    READONLY = "READONLY"
    TEST = "TEST"
    MINIMAL = "MINIMAL"


class ToolClass(StrEnum):
    SYSTEM = "system"  # admitted in every mode
    READ = "read"  # admitted wherever reads are (all but MINIMAL)
    WRITE = "write"  # admitted only where writes are (FULL, TEST)


_ADMITTED_CLASSES: dict[Mode, frozenset[ToolClass]] = {
    Mode.FULL: frozenset(ToolClass),
    Mode.TEST: frozenset(ToolClass),
    Mode.READONLY: frozenset({ToolClass.SYSTEM, ToolClass.READ}),
    Mode.MINIMAL: frozenset({ToolClass.SYSTEM}),
}


def admits(mode: Mode, tool_class: ToolClass) -> bool:
    """True when a tool of `tool_class` may run in `mode`."""
    return tool_class in _ADMITTED_CLASSES[mode]


def writes_allowed(mode: Mode) -> bool:
    return mode in (Mode.FULL, Mode.TEST)


def opens_database(mode: Mode) -> bool:
    return mode is not Mode.MINIMAL
