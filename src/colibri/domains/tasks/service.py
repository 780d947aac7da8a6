"""Creating, changing and reading tasks: the rules of SPEC §4 applied in order, all or nothing.

Each function runs in `db.atomic()`: under the chain that is a savepoint inside the call's
BEGIN IMMEDIATE transaction, on its own it is that transaction, so a refusal never leaves
half a change behind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from colibri.core.callers import LOCAL_PRINCIPAL
from colibri.core.clock import utc_now
from colibri.domains.tasks import errors, graph, leases, repository, states
from colibri.domains.tasks.arguments import CreateTaskArgs, UpdateTaskArgs
from colibri.domains.tasks.leases import Held
from colibri.domains.tasks.models import FieldChange, Task, TaskDetail
from colibri.domains.tasks.states import Status
from colibri.domains.trail import api as trail
from colibri.storage import Connection, Database

_FIELDS = ("title", "description", "status", "priority", "depends_on", "tags", "assignee")
# What the history shows of a lease (its token is the version of the change that took it).
_LEASE_FIELDS = ("lease_holder", "lease_expires_at")


def create_task(db: Database, args: CreateTaskArgs, *, principal: str = LOCAL_PRINCIPAL) -> Task:
    """A new task; it starts as todo, or in `args.status` if the state machine allows that from todo.
    `principal` is who asked, as the server proved it; the history keeps it."""
    with db.atomic() as conn:
        number = repository.next_number(conn)
        task_id = repository.task_id_for(number)
        fields: dict[str, Any] = {
            "title": args.title,
            "description": args.description,
            "status": states.INITIAL,
            "priority": args.priority,
            "depends_on": _unique(args.depends_on),
            "tags": _unique(args.tags),
            "assignee": args.assignee,
        }
        _check_dependencies(conn, task_id, fields["depends_on"])
        if args.status != states.INITIAL:
            _check_move(conn, task_id, states.INITIAL, args.status, fields["depends_on"])
            fields["status"] = args.status
        now = utc_now()
        lease = Held()
        if fields["status"] == "in_progress":
            lease = Held(principal, leases.expiry(now, args.lease_s), args.lease_s, 1)
            fields["assignee"] = fields["assignee"] or principal
        repository.insert_task(conn, number, fields, now, lease)
        if fields["depends_on"]:
            repository.add_dependencies(conn, task_id, fields["depends_on"])
        created: dict[str, FieldChange] = {name: {"from": None, "to": fields[name]} for name in _FIELDS}
        if lease.holder is not None:
            created.update(_lease_changes(Held(), lease))
        repository.add_history(
            conn, task_id, version=1, event="created", changes=created, now=now, principal=principal
        )
    # Everything the row holds is known here; reading it back would only cost time.
    shown = lease.shown(fields["status"], now)
    return Task(id=task_id, created_at=now, updated_at=now, version=1, lease=shown, **fields)


def update_task(db: Database, args: UpdateTaskArgs, *, principal: str = LOCAL_PRINCIPAL) -> Task:
    """Apply the given fields; status moves go through the state machine and its entry rules.
    `principal` is who asked, as the server proved it; the history keeps it."""
    with db.atomic() as conn:
        found = repository.get_held(conn, args.task_id)
        if found is None:
            raise errors.not_found(args.task_id)
        task, lease = found
        # A stale caller learns that first, before rules judged against a state it has not seen.
        # The write below checks the version again, inside the UPDATE itself.
        expected = task.version if args.expected_version is None else args.expected_version
        if expected != task.version:
            raise errors.conflict(task.id, expected, task.version)
        leases.check_token(task.id, lease, args.lease_token)
        now = utc_now()
        in_progress = task.status == "in_progress"
        taking_over = leases.check_write(
            task.id, lease, principal, now, take_over=args.take_over, in_progress=in_progress
        )
        wanted = args.given()
        if "depends_on" in wanted:
            wanted["depends_on"] = _unique(wanted["depends_on"])
            _check_dependencies(conn, task.id, wanted["depends_on"])
        if "tags" in wanted:
            wanted["tags"] = _unique(wanted["tags"])
        depends_on = wanted.get("depends_on", task.depends_on)
        if "status" in wanted:
            _check_move(conn, task.id, task.status, wanted["status"], depends_on)
        elif "depends_on" in wanted and task.status in _UNDER_WAY:
            _require_done(conn, task.id, task.status, depends_on)
        target: Status = wanted.get("status", task.status)
        new_lease = _lease_after(task, lease, target, principal, now, args.lease_s, taking_over=taking_over)
        taken = new_lease.holder is not None and new_lease.token != lease.token
        # A lease taken (or taken over) names its holder as assignee, unless someone else is.
        if taken and "assignee" not in wanted and task.assignee in (None, lease.holder):
            wanted["assignee"] = principal
        changes = {**_diff(task, wanted), **_lease_changes(lease, new_lease)}
        if not changes:
            return task
        columns: dict[str, Any] = {name: change["to"] for name, change in changes.items()}
        columns.pop("depends_on", None)
        columns.update(lease_s=new_lease.seconds, lease_token=new_lease.token)
        if not repository.update_task(conn, task.id, expected, columns, now):
            current = repository.current_version(conn, task.id)
            if current is None:
                raise errors.not_found(task.id)
            raise errors.conflict(task.id, expected, current)
        if "depends_on" in changes:
            repository.set_dependencies(conn, task.id, wanted["depends_on"])
        version = task.version + 1
        repository.add_history(
            conn, task.id, version=version, event="updated", changes=changes, now=now, principal=principal
        )
    new_values = {name: change["to"] for name, change in changes.items() if name in _FIELDS}
    shown = new_lease.shown(target, now)
    return task.model_copy(update={**new_values, "updated_at": now, "version": version, "lease": shown})


def _lease_after(  # noqa: PLR0917 - each is one fact of the update, and named at the one call
    task: Task,
    lease: Held,
    target: Status,
    principal: str,
    now: str,
    seconds: int | None,
    *,
    taking_over: bool,
) -> Held:
    """The lease once this update is written (SPEC §24): taken on entering in_progress (or taking
    over, or a first write to an in_progress task nobody holds), renewed by its holder's update,
    ended on leaving in_progress. Its token is the version of the change that took it."""
    if target != "in_progress":
        return Held(token=lease.token)
    if task.status == "in_progress" and lease.holder is not None and not taking_over:
        length = seconds or lease.seconds or leases.DEFAULT_S
        return Held(lease.holder, leases.expiry(now, length), length, lease.token)
    length = seconds or leases.DEFAULT_S
    return Held(principal, leases.expiry(now, length), length, task.version + 1)


def _lease_changes(before: Held, after: Held) -> dict[str, FieldChange]:
    was = {"lease_holder": before.holder, "lease_expires_at": before.expires_at}
    now = {"lease_holder": after.holder, "lease_expires_at": after.expires_at}
    return {name: {"from": was[name], "to": now[name]} for name in _LEASE_FIELDS if was[name] != now[name]}


def get_task_detail(db: Database, task_id: str) -> TaskDetail:
    """The task, every change it went through and the ids of the tasks that depend on it."""
    with db.snapshot() as conn:
        task = repository.get_task(conn, task_id)
        if task is None:
            raise errors.not_found(task_id)
        return TaskDetail(
            **task.model_dump(),
            history=repository.history(conn, task_id),
            blocks=repository.dependents_of(conn, task_id),
        )


def _check_dependencies(conn: Connection, task_id: str, depends_on: Sequence[str]) -> None:
    """Every dependency exists and none of them (even indirectly) depends on `task_id`."""
    if not depends_on:
        return
    found = repository.statuses_of(conn, depends_on)
    missing = [dep for dep in depends_on if dep not in found and dep != task_id]
    if missing:
        raise errors.dependencies_not_found(missing)
    cycle = graph.cycle_through(task_id, depends_on, lambda ids: repository.dependents_in(conn, ids))
    if cycle is not None:
        raise errors.dependency_cycle(cycle)


def _check_move(
    conn: Connection, task_id: str, current: Status, target: Status, depends_on: Sequence[str]
) -> None:
    """The state machine first, then what entering `target` requires."""
    states.check_transition(task_id, current, target)
    if target in _UNDER_WAY:
        _require_done(conn, task_id, target, depends_on)
    if target == "done" and not trail.has_writeback(conn, task_id):
        raise errors.writeback_required(task_id)


def _require_done(conn: Connection, task_id: str, state: Status, depends_on: Sequence[str]) -> None:
    """Work under way (in_progress, review, done) never waits on open work."""
    found = repository.statuses_of(conn, depends_on)
    still_open = [(dep, found[dep]) for dep in depends_on if found[dep] != "done"]
    if still_open:
        raise errors.dependencies_open(task_id, state, still_open)


_UNDER_WAY = frozenset({"in_progress", "review", "done"})


def _diff(task: Task, wanted: Mapping[str, Any]) -> dict[str, FieldChange]:
    """The fields whose value really changes, in a fixed order."""
    return {
        name: {"from": getattr(task, name), "to": wanted[name]}
        for name in _FIELDS
        if name in wanted and wanted[name] != getattr(task, name)
    }


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))
