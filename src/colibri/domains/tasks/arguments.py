"""Input models of the task tools: the single source of validation and of the advertised schemas.

Anything these models reject is INVALID_PARAMS with `details.issues`; rules that need the
database (unknown ids, illegal moves) are domain errors raised later.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from colibri.core.cursor import decode_cursor
from colibri.core.spec import Arguments
from colibri.domains.tasks import leases
from colibri.domains.tasks.models import TASK_ID_PATTERN, Priority
from colibri.domains.tasks.states import STATUSES, Status

MAX_TITLE = 200
MAX_DESCRIPTION = 20_000
MAX_DEPENDENCIES = 100
MAX_TAGS = 50
MAX_TAG = 64
MAX_ASSIGNEE = 200
MAX_PAGE = 200
MAX_ACTIONS = 50


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain something besides spaces")
    return value


TaskId = Annotated[
    StrictStr,
    Field(pattern=TASK_ID_PATTERN, description="A task id as returned by task_create, e.g. T-1."),
]
Title = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=MAX_TITLE,
        description=f"Short title, 1-{MAX_TITLE} characters, not only spaces.",
    ),
    AfterValidator(_not_blank),
]
Description = Annotated[
    StrictStr,
    Field(max_length=MAX_DESCRIPTION, description=f"Free text, up to {MAX_DESCRIPTION:,} characters."),
]
Tag = Annotated[StrictStr, Field(min_length=1, max_length=MAX_TAG)]
Tags = Annotated[
    list[Tag],
    Field(
        max_length=MAX_TAGS,
        description=f"Labels (up to {MAX_TAGS}, each 1-{MAX_TAG} characters); duplicates are dropped.",
    ),
]
Dependencies = Annotated[
    list[TaskId],
    Field(
        max_length=MAX_DEPENDENCIES,
        description="Ids of tasks that must be done before this one can start (all must exist; "
        "no cycles); duplicates are dropped.",
    ),
]
Assignee = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ASSIGNEE)]
PriorityField = Annotated[Priority, Field(description="critical, high, medium or low.")]


def _lease_seconds(value: Any) -> Any:
    # One message for a wrong type and a wrong size alike, naming the range (pydantic's own two
    # messages name only half of it each). None is for the model's own rules to judge.
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not leases.MIN_S <= value <= leases.MAX_S:
        given = repr(value)
        raise ValueError(f"must be {leases.RANGE}, got {given if len(given) <= 40 else type(value).__name__}")
    return value


LeaseSeconds = Annotated[
    StrictInt,
    Field(
        ge=leases.MIN_S,
        le=leases.MAX_S,
        description=f"Length of the lease taken by moving the task to in_progress, in seconds "
        f"({leases.MIN_S}-{leases.MAX_S:,}; default {leases.DEFAULT_S}, or the lease's own length "
        "when its holder renews it). Ignored unless the task is or becomes in_progress.",
    ),
]


class CreateTaskArgs(Arguments):
    """task_create."""

    title: Title
    description: Description = ""
    priority: PriorityField = "medium"
    status: Status = Field(
        default="todo",
        description="Starting status; a new task starts as todo, and any other value must be a move "
        "the state machine allows from todo (in_progress, blocked, cancelled).",
    )
    depends_on: Dependencies = []
    tags: Tags = []
    assignee: Assignee | None = Field(default=None, description="Who works on it (optional).")
    lease_s: LeaseSeconds = leases.DEFAULT_S

    _lease_s = field_validator("lease_s", mode="before")(_lease_seconds)


_NOT_NULL = ("title", "description", "priority", "status", "depends_on", "tags")
CHANGEABLE = (*_NOT_NULL, "assignee")
# Also an update: renewing the lease (a heartbeat) or taking it over.
_LEASE_ONLY = ("lease_s", "take_over")
_OPTIONAL_INTEGERS = ("expected_version", "lease_s", "lease_token")


def _advertise_not_null(schema: dict[str, Any]) -> None:
    """In the advertised schema these fields are optional but never null (null is refused below)."""
    for name in (*_NOT_NULL, *_OPTIONAL_INTEGERS):
        prop = schema["properties"][name]
        options = [option for option in prop.pop("anyOf") if option.get("type") != "null"]
        prop.pop("default", None)
        prop.update(options[0])


class UpdateTaskArgs(Arguments):
    """task_update: fields that are absent keep their value."""

    model_config = ConfigDict(json_schema_extra=_advertise_not_null)

    task_id: TaskId
    expected_version: StrictInt | None = Field(
        default=None,
        ge=1,
        le=2**63 - 1,  # SQLite's largest integer; a bigger one cannot even be compared with a version
        description="The version you last read; if the task has changed since, nothing is written "
        "and the answer is ERR_CONFLICT with the current version. Omit to update unconditionally.",
    )
    title: Title | None = None
    description: Description | None = None
    priority: PriorityField | None = None
    status: Status | None = Field(
        default=None,
        description="New status, through the state machine: todo → in_progress|blocked|cancelled; "
        "in_progress → review|blocked|todo|cancelled; blocked → todo|in_progress|cancelled; "
        "review → done|in_progress; cancelled → todo; done is final. in_progress needs every "
        "dependency done; done needs a thought_record citing the task (a writeback).",
    )
    depends_on: Dependencies | None = Field(
        default=None, description="Replaces the whole dependency list; [] removes all."
    )
    tags: Tags | None = Field(default=None, description="Replaces the whole tag list.")
    assignee: Assignee | None = Field(default=None, description="New assignee; null unassigns.")
    lease_s: LeaseSeconds | None = None
    take_over: StrictBool = Field(
        default=False,
        description="Take over the lease of an in_progress task whose holder's lease has ended (it "
        "becomes yours, recorded in history). While the lease runs: ERR_LEASED.",
    )
    lease_token: StrictInt | None = Field(
        default=None,
        ge=1,
        le=2**63 - 1,
        description="lease.token from when you took the lease (the task claim or in_progress move "
        "returned it): if the task has been leased since by someone else, nothing is written and the "
        "answer is ERR_CONFLICT (a fence against acting on a lease you no longer hold).",
    )

    _lease_s = field_validator("lease_s", mode="before")(_lease_seconds)

    @field_validator(*_NOT_NULL, *_OPTIONAL_INTEGERS, mode="before")
    @classmethod
    def _no_null(cls, value: Any) -> Any:
        # Runs only for values the caller sent: null would be ambiguous (clear? keep?), so say so.
        if value is None:
            raise ValueError("must not be null; omit the field to keep its current value")
        return value

    @model_validator(mode="after")
    def _something_to_change(self) -> UpdateTaskArgs:
        if not self.model_fields_set.intersection((*CHANGEABLE, *_LEASE_ONLY)):
            raise ValueError(
                f"nothing to update: give at least one of {', '.join((*CHANGEABLE, *_LEASE_ONLY))}"
            )
        return self

    def given(self) -> dict[str, Any]:
        """The fields the caller sent, by name (assignee may be None: unassign)."""
        return {name: getattr(self, name) for name in CHANGEABLE if name in self.model_fields_set}


class GetTaskArgs(Arguments):
    """task_get."""

    task_id: TaskId


def _one_or_many(schema: dict[str, Any]) -> None:
    """Advertise what the field accepts: a single status, or a list of them."""
    many = next(option for option in schema["anyOf"] if option.get("type") == "array")
    schema["anyOf"] = [many["items"], {**many, "minItems": 1}, {"type": "null"}]


class ListTasksArgs(Arguments):
    """task_list: filters combine with AND; pages go oldest first."""

    status: list[Status] | None = Field(
        default=None,
        description="One status or a list of statuses (any of them matches).",
        json_schema_extra=_one_or_many,
    )
    tag: Tag | None = Field(default=None, description="Only tasks carrying this tag (exact match).")
    assignee: Assignee | None = Field(default=None, description="Only tasks assigned to this name.")
    text: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TITLE,
        description="Only tasks whose title or description contains this text (case-insensitive for ASCII).",
    )
    limit: StrictInt = Field(default=50, ge=1, le=MAX_PAGE, description=f"Page size, 1-{MAX_PAGE}.")
    cursor: StrictStr | None = Field(
        default=None, description="next_cursor from the previous page; omit for the first page."
    )

    @field_validator("status", mode="before")
    @classmethod
    def _one_status_is_a_list(cls, value: Any) -> Any:
        choices = ", ".join(STATUSES)
        if isinstance(value, str):
            if value not in STATUSES:
                raise ValueError(f"unknown status {value!r}; use one of: {choices}")
            return [value]
        if value is not None and not isinstance(value, list):
            raise ValueError(f"must be a status or a list of statuses ({choices})")
        return value

    @field_validator("status")
    @classmethod
    def _statuses_given(cls, value: list[Status] | None) -> list[Status] | None:
        if value is not None and not value:
            raise ValueError("give at least one status, or omit status to list every status")
        return value

    @field_validator("cursor")
    @classmethod
    def _cursor_readable(cls, value: str | None) -> str | None:
        if value is not None:
            decode_cursor(value)
        return value

    def statuses(self) -> list[Status]:
        return list(dict.fromkeys(self.status or ()))


class NextActionsArgs(Arguments):
    """task_next_actions."""

    limit: StrictInt = Field(
        default=5, ge=1, le=MAX_ACTIONS, description=f"How many actions to return, 1-{MAX_ACTIONS}."
    )
    claim: StrictBool = Field(
        default=False,
        description="Claim the first start or take_over action for yourself, atomically (no other "
        "caller, on any replica, gets the same task): it is moved to in_progress under your lease "
        "and returned as the only action, its lease.token to pass as lease_token. Nothing to claim: "
        "actions is empty and reason says why. A write: refused where writes are.",
    )
    lease_s: LeaseSeconds | None = Field(
        default=None,
        description=f"With claim: the lease's length in seconds, {leases.MIN_S}-{leases.MAX_S:,} "
        f"(default {leases.DEFAULT_S}).",
    )

    _lease_s = field_validator("lease_s", mode="before")(_lease_seconds)

    @model_validator(mode="after")
    def _lease_needs_claim(self) -> NextActionsArgs:
        if self.lease_s is not None and not self.claim:
            raise ValueError("lease_s applies only with claim=true: give claim=true, or omit lease_s")
        return self
