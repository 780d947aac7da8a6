"""The task state machine (SPEC §4): the one place that decides which status moves are legal.

The table below is the whole rule set. Moving to the same status is not a move and is
refused like any other move the table does not list. The extra conditions on entering
`in_progress` (dependencies done) and `done` (a writeback exists) need the database and live
in `service.py`; they are asked only after this table has allowed the move.
"""

from __future__ import annotations

from typing import Literal, get_args

from colibri.domains.tasks import errors

Status = Literal["todo", "in_progress", "blocked", "review", "done", "cancelled"]
STATUSES: tuple[Status, ...] = get_args(Status)

TRANSITIONS: dict[Status, tuple[Status, ...]] = {
    "todo": ("in_progress", "blocked", "cancelled"),
    "in_progress": ("review", "blocked", "todo", "cancelled"),
    "blocked": ("todo", "in_progress", "cancelled"),
    "review": ("done", "in_progress"),
    "done": (),
    "cancelled": ("todo",),
}

INITIAL: Status = "todo"


def allowed_targets(current: Status) -> tuple[Status, ...]:
    """The statuses a task in `current` may move to, in the table's order."""
    return TRANSITIONS[current]


def is_allowed(current: Status, target: Status) -> bool:
    return target in TRANSITIONS[current]


def check_transition(task_id: str, current: Status, target: Status) -> None:
    """Raise ERR_INVALID_TRANSITION unless the table allows `current` → `target`."""
    if not is_allowed(current, target):
        raise errors.invalid_transition(task_id, current, target, allowed_targets(current))
