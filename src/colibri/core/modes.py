"""Runtime modes and the admission table: which tool runs in which mode.

The table knows all 14 tool names and their class, whether or not the domain that
implements a tool is loaded, so admission never depends on import order.
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


TOOL_CLASSES: dict[str, ToolClass] = {
    "server_ping": ToolClass.SYSTEM,
    "server_health": ToolClass.SYSTEM,
    "task_create": ToolClass.WRITE,
    "task_get": ToolClass.READ,
    "task_update": ToolClass.WRITE,
    "task_list": ToolClass.READ,
    "task_next_actions": ToolClass.READ,
    "thought_record": ToolClass.WRITE,
    "thought_record_list": ToolClass.READ,
    "audit_verify_chain": ToolClass.READ,
    "audit_session_start": ToolClass.WRITE,
    "merkle_finalize": ToolClass.WRITE,
    "merkle_root": ToolClass.READ,
    "skill_list": ToolClass.READ,
}

_ADMITTED_CLASSES: dict[Mode, frozenset[ToolClass]] = {
    Mode.FULL: frozenset(ToolClass),
    Mode.TEST: frozenset(ToolClass),
    Mode.READONLY: frozenset({ToolClass.SYSTEM, ToolClass.READ}),
    Mode.MINIMAL: frozenset({ToolClass.SYSTEM}),
}


def is_admitted(mode: Mode, tool_name: str) -> bool:
    """True when `tool_name` may run in `mode`; names outside the table never are."""
    tool_class = TOOL_CLASSES.get(tool_name)
    return tool_class is not None and tool_class in _ADMITTED_CLASSES[mode]


def admitted_tools(mode: Mode) -> list[str]:
    return [name for name in TOOL_CLASSES if is_admitted(mode, name)]


def writes_allowed(mode: Mode) -> bool:
    return mode in (Mode.FULL, Mode.TEST)


def opens_database(mode: Mode) -> bool:
    return mode is not Mode.MINIMAL
