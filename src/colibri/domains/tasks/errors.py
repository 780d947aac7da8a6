"""Every refusal of the task pipeline, built in one place so codes and guidance stay consistent.

All are `DomainError`s (Pattern B: they reach the agent inside a success envelope):

ERR_NOT_FOUND             the task, or a task named in depends_on, does not exist
ERR_CONFLICT              expected_version is not the task's current version
ERR_INVALID_TRANSITION    the state machine does not allow the status move
ERR_DEPENDENCIES_OPEN     in_progress asked for while a dependency is not done
ERR_WRITEBACK_REQUIRED    done asked for with no thought record citing the task
ERR_DEPENDENCY_CYCLE      depends_on would make a task (indirectly) depend on itself
ERR_LEASED                another principal holds the task's lease (SPEC §24), or held it and
                          take_over was not asked for
ERR_NOT_LEASED            take_over asked for on a task nobody holds
ERR_CONFLICT (fencing)    a lease_token that is not the task's latest lease's
"""

from __future__ import annotations

from collections.abc import Sequence

from colibri.core.errors import DomainError


def not_found(task_id: str) -> DomainError:
    return DomainError(
        "ERR_NOT_FOUND",
        f"task {task_id} not found; use task_list to see existing ids",
        task_id=task_id,
    )


def dependencies_not_found(missing: Sequence[str]) -> DomainError:
    names = ", ".join(missing)
    return DomainError(
        "ERR_NOT_FOUND",
        f"depends_on names task(s) that do not exist: {names}; create them first "
        "or use task_list to find the right ids",
        missing=list(missing),
    )


def conflict(task_id: str, expected: int, current: int) -> DomainError:
    what = (
        f"task {task_id} changed since version {expected}: it is now at version {current}"
        if expected < current
        else f"task {task_id} has no version {expected} yet: it is at version {current}"
    )
    return DomainError(
        "ERR_CONFLICT",
        f"{what}; task_get it, re-apply your change to what is there now and retry with "
        f"expected_version {current}",
        task_id=task_id,
        expected_version=expected,
        current_version=current,
    )


def invalid_transition(task_id: str, current: str, target: str, allowed: Sequence[str]) -> DomainError:
    choices = ", ".join(allowed)
    if not allowed:
        message = (
            f"task {task_id} is {current}, which is final: its status cannot change; "
            "create a new task for follow-up work"
        )
    elif current == target:
        message = f"task {task_id} is already {current}; omit status to keep it, or move it to: {choices}"
    else:
        message = (
            f"task {task_id} cannot move from {current} to {target}; from {current} it can move to: {choices}"
        )
    return DomainError(
        "ERR_INVALID_TRANSITION",
        message,
        task_id=task_id,
        from_status=current,
        to_status=target,
        allowed=list(allowed),
    )


def dependencies_open(task_id: str, state: str, open_dependencies: Sequence[tuple[str, str]]) -> DomainError:
    listed = ", ".join(f"{dep} ({status})" for dep, status in open_dependencies)
    return DomainError(
        "ERR_DEPENDENCIES_OPEN",
        f"task {task_id} cannot be {state} while its dependencies are not done: {listed}; "
        "finish those first (task_next_actions shows what is ready) or remove them from depends_on",
        task_id=task_id,
        open_dependencies=[{"id": dep, "status": status} for dep, status in open_dependencies],
    )


def writeback_required(task_id: str) -> DomainError:
    return DomainError(
        "ERR_WRITEBACK_REQUIRED",
        f"task {task_id} cannot be done until a thought record cites it; write back what was done: "
        f'call audit_session_start (once per session), then thought_record with kind "writeback", '
        f'task_id "{task_id}" and content summarising the outcome, then retry this update',
        task_id=task_id,
        example={
            "tool": "thought_record",
            "arguments": {
                "session_id": "<session_id from audit_session_start>",
                "kind": "writeback",
                "task_id": task_id,
                "content": "<what was done, and how it was checked>",
            },
        },
    )


def dependency_cycle(cycle: Sequence[str]) -> DomainError:
    path = " → ".join(cycle)
    task_id, first = cycle[0], cycle[1]
    return DomainError(
        "ERR_DEPENDENCY_CYCLE",
        f"depends_on would create a cycle: {path} (each arrow reads 'depends on'); a task cannot "
        f"depend on itself, even indirectly; drop {first} from the depends_on of {task_id}",
        cycle=list(cycle),
    )


def leased(task_id: str, holder: str, expires_at: str, span: str, *, ended: bool) -> DomainError:
    if ended:
        message = (
            f"task {task_id} is leased by {holder}, whose lease ended {span} ago ({expires_at}); "
            "to work on it, take it over: repeat this task_update with take_over=true (the history "
            "records it), or leave it to its holder"
        )
    else:
        message = (
            f"task {task_id} is leased by {holder} until {expires_at} (in {span}): only {holder} "
            "may change it until then; pick another task (task_next_actions), or wait for the lease "
            "to end and take it over with take_over=true"
        )
    return DomainError(
        "ERR_LEASED", message, task_id=task_id, holder=holder, expires_at=expires_at, expired=ended
    )


def not_leased(task_id: str) -> DomainError:
    return DomainError(
        "ERR_NOT_LEASED",
        f"task {task_id} holds no lease to take over (only an in_progress task has one); "
        "omit take_over, or task_get it to see its status",
        task_id=task_id,
    )


def fenced(task_id: str, given: int, current: int | None, holder: str | None) -> DomainError:
    if current is None:
        now = f"task {task_id} has never been leased"
    elif holder is None:
        now = f"the latest lease of task {task_id} has token {current} and has ended"
    else:
        now = f"task {task_id}'s lease is now {holder}'s, with token {current}"
    return DomainError(
        "ERR_CONFLICT",
        f"lease_token {given} is not the task's lease: {now}; your lease was taken over or ended, "
        "so nothing was written; task_get it before doing more, and claim other work",
        task_id=task_id,
        lease_token=given,
        current_lease_token=current,
        holder=holder,
    )
