"""task_next_actions(claim=true): the first start or take_over action, claimed for the caller (SPEC §24).

The claim runs inside the call's write transaction, which holds the store's write lock: on
PostgreSQL one advisory lock for every replica, on SQLite BEGIN IMMEDIATE. So between reading the
board and moving the task nobody else writes anything, and each task is claimed by exactly one
caller however many replicas ask at once. The move itself is an ordinary task_update (status
in_progress, or take_over), with every rule of the state machine and of leases.

Claims come one after another, each changing one task; reading a 10,000-task board again for each
would cost tens of milliseconds under that lock. So the reading is kept with the version the claim
left (Board.claimed): the next claim, from this replica, finds it current after one read. A claim
from another replica moves the version past it, and the next claim here reads only the tasks
changed since (changes.py).
"""

from __future__ import annotations

from colibri.core.clock import utc_now
from colibri.domains.tasks import board as boards
from colibri.domains.tasks import next_actions, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.board import Board
from colibri.domains.tasks.models import NextActions
from colibri.domains.tasks.next_actions import plural
from colibri.domains.tasks.stuck import restated
from colibri.storage import Database


def claim(db: Database, principal: str, lease_s: int | None) -> NextActions:
    with db.atomic() as conn:
        now = utc_now()
        board = next_actions.current_board(conn)
        blocked, blocked_total = board.blocked
        chosen = _first(board, principal, now)
        if chosen is None:
            reason = nothing_ready(board, principal, now)
            return NextActions(actions=[], blocked=blocked, blocked_total=blocked_total, reason=reason)
        i, kind = chosen
        task_id = board.backlog.ids[i]
        move = {"status": "in_progress"} if kind == "start" else {"take_over": True}
        length = {} if lease_s is None else {"lease_s": lease_s}
        args = UpdateTaskArgs.model_validate({"task_id": task_id, **move, **length})
        task = service.update_task(db, args, principal=principal)
        assert task.lease is not None
        # The claim's update moved the version once. If it moved once in all, that move was the
        # claim's: every Colibri writer waits for the write lock held here. Two or more means a
        # hand edit (which takes no lock) came between the reading and the update: the reading
        # keeps its own version then, and the next call catches up on both changes.
        after = boards.version_of(conn)
        version = after if after == board.version + 1 else board.version
        claimed = board.claimed(i, principal, task.lease.expires_at, version)
        # A stuck task shown names the status of what it waits on: this one's moved.
        claimed.blocked = restated(board.blocked, claimed.backlog, {task_id})
        next_actions.keep_board(conn, claimed)
        taken = next_actions.action(task, kind, board.unblocks[i], now)
        return NextActions(actions=[taken], blocked=blocked, blocked_total=blocked_total)


def _first(board: Board, principal: str, now: str) -> tuple[int, boards.ActionKind] | None:
    for i in board.ranked():
        kind = board.kind(i, principal, now)
        if kind in {"start", "take_over"}:
            return i, kind
    return None


def nothing_ready(board: Board, principal: str, now: str) -> str:
    """Why there is nothing to claim, counting what the open tasks wait for."""
    backlog = board.backlog
    waiting = leased = review = blocked = mine = 0
    ends: list[str] = []
    for i, status in enumerate(backlog.statuses):
        if status == "todo":
            waiting += 1  # a todo task that is not waiting would have been claimed
        elif status == "review":
            review += 1
        elif status == "blocked":
            blocked += 1
        elif status == "in_progress":
            holder, expires = backlog.holders[i], backlog.expiries[i]
            if holder is None or holder == principal:
                mine += 1
            else:
                leased += 1
                if expires is not None:
                    ends.append(expires)
    parts = []
    if waiting:
        parts.append(f"{plural(waiting, 'task')} {_verb(waiting, 'wait')} on dependencies")
    if leased:
        first = min(ends)
        parts.append(f"{plural(leased, 'task')} leased by others (the first lease ends at {first})")
    if mine:
        parts.append(f"{plural(mine, 'task')} in progress for you (task_next_actions shows them)")
    if review:
        parts.append(f"{plural(review, 'task')} in review")
    if blocked:
        parts.append(f"{plural(blocked, 'task')} marked blocked")
    if not parts:
        return "nothing ready: no open tasks; create some with task_create"
    return "nothing ready: " + ", ".join(parts)


def _verb(count: int, verb: str) -> str:
    return verb + "s" if count == 1 else verb
