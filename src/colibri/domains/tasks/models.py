"""What the task tools return: the task object and the shapes built around it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from colibri.core.spec import Model
from colibri.domains.tasks.states import Status

Priority = Literal["critical", "high", "medium", "low"]
PRIORITIES: tuple[Priority, ...] = ("critical", "high", "medium", "low")

TASK_ID_PATTERN = r"^T-[1-9][0-9]*$"

TaskIdOut = Annotated[str, Field(description="Task id, e.g. T-1.", examples=["T-1"])]


class Lease(Model):
    """Who holds an in_progress task (SPEC §24), until when, and the token that fences its writes."""

    holder: str = Field(description="The principal holding the lease; only it may write the task meanwhile.")
    expires_at: str = Field(description="ISO 8601 UTC; any update by the holder moves it lease_s later.")
    lease_s: int = Field(description="The lease's length in seconds; each renewal lasts as long.")
    token: int = Field(
        description="The task's version when this lease was taken: pass it as lease_token to "
        "task_update so that a write made after the lease was taken over is refused (ERR_CONFLICT)."
    )
    expired: bool = Field(
        description="True once expires_at has passed: another principal may take the task over "
        "with task_update(take_over=true)."
    )


class Task(Model):
    """One task, as every task tool returns it."""

    id: TaskIdOut
    title: str = Field(description="Short title (1-200 characters).")
    description: str = Field(description="Free text (up to 20,000 characters); may be empty.")
    status: Status = Field(description="todo, in_progress, blocked, review, done or cancelled.")
    priority: Priority = Field(description="critical, high, medium or low.")
    depends_on: list[TaskIdOut] = Field(description="Tasks that must be done before this one can start.")
    tags: list[str] = Field(description="Free-form labels.")
    assignee: str | None = Field(description="Who works on it, or null.")
    created_at: str = Field(description="ISO 8601 UTC timestamp.")
    updated_at: str = Field(description="ISO 8601 UTC timestamp of the last change.")
    version: int = Field(
        description="1 at creation, +1 per change; pass it as expected_version to task_update."
    )
    lease: Lease | None = Field(
        default=None,
        description="The lease of an in_progress task: its holder, expiry and token; null when the "
        "task is not in_progress or nobody holds it.",
    )


# What a task field can hold: text (title, status, ...), a list of ids or tags, or null (assignee).
FieldValue = str | list[str] | None

# `from` is a Python keyword, hence the functional TypedDict form.
FieldChange = TypedDict("FieldChange", {"from": FieldValue, "to": FieldValue})


class HistoryEntry(Model):
    """One change to a task: the version it produced and each field's old and new value."""

    version: int = Field(description="The task's version after this change.")
    event: Literal["created", "updated"]
    changed_at: str = Field(description="ISO 8601 UTC timestamp.")
    changes: dict[str, FieldChange] = Field(
        description='Changed fields, each {"from": old, "to": new}; at creation "from" is null. A '
        "lease shows as lease_holder and lease_expires_at: taken (from null), renewed, taken over "
        "(from one principal to another) or ended (to null)."
    )
    principal: str = Field(
        description="Who made the change, as the server proved it: the token's name over HTTP, "
        "'local' on stdio (and for changes made before principals were recorded)."
    )


class TaskDetail(Task):
    """task_get: the task, its full history (oldest first) and the tasks that wait on it."""

    history: list[HistoryEntry] = Field(description="Every change, oldest first.")
    blocks: list[TaskIdOut] = Field(description="Ids of the tasks that list this one in their depends_on.")


class TaskPage(Model):
    """task_list: one page of tasks, oldest first."""

    tasks: list[Task]
    next_cursor: str | None = Field(
        description="Pass as cursor to get the next page; null when this is the last page."
    )


class Action(Model):
    """One thing to do now."""

    task: Task
    action: Literal["continue", "review", "start", "take_over"] = Field(
        description="continue an in_progress task (yours, or nobody's), review a task in review, "
        "start a ready todo task, or take_over an in_progress task whose holder's lease ended."
    )
    reason: str = Field(description="Why this task is suggested, in one line.")
    unblocks: int = Field(description="How many open tasks transitively wait on this one.")


class BlockedTask(Model):
    """A task that cannot be worked on now, and what it waits for."""

    task_id: TaskIdOut
    title: str
    status: Status
    waiting_on: list[TaskIdOut] = Field(description="Its dependencies that are not done yet.")
    reason: str


class NextActions(Model):
    """task_next_actions: ranked suggestions and the tasks that are stuck."""

    actions: list[Action] = Field(description="continue first, then review, then start; best first.")
    blocked: list[BlockedTask] = Field(
        description="Open tasks that cannot start or go on: status blocked, or todo waiting on "
        "dependencies (at most 50, highest priority first)."
    )
    blocked_total: int = Field(description="How many tasks are blocked in all.")
    reason: str | None = Field(
        default=None,
        description="With claim=true and nothing to claim: why (e.g. 'nothing ready: 3 tasks wait "
        "on dependencies'); null otherwise.",
    )
