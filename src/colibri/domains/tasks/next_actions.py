"""task_next_actions: what to do now, ranked and explained, and what is stuck.

Ranking (SPEC §4, §24): every `continue` (in_progress, held by the caller or by nobody), then every
`review`, then `start` (todo tasks whose dependencies are all done) and `take_over` (in_progress
tasks whose holder's lease ended) together. Within each group: priority, then how many open tasks
wait on the task transitively (more first), then the oldest first. Tasks another principal holds
under a running lease are not the caller's to act on, and are left out.

The board's reading is kept between calls (board.py); the answers made from it are kept too, per
caller, until the first running lease ends (an answer that offers a take_over says how long ago
the lease ended, so it is made afresh each time).
"""

from __future__ import annotations

import heapq

from colibri.core.callers import LOCAL_PRINCIPAL
from colibri.core.clock import utc_now
from colibri.domains.tasks import board as boards
from colibri.domains.tasks import changes, leases, repository
from colibri.domains.tasks.board import ActionKind, Board
from colibri.domains.tasks.models import Action, NextActions, Task
from colibri.domains.tasks.stuck import stuck
from colibri.storage import Connection, Database

KEPT_ANSWERS = 256  # per reading: one per (limit, caller) asked; beyond, the oldest go
_BOARD = "tasks.board"


def next_actions(db: Database, limit: int, principal: str = LOCAL_PRINCIPAL) -> NextActions:
    # Inside a write transaction the version may be one of its own, undone if it rolls back and
    # then given to another change: such a reading is never kept.
    keep = not db.in_transaction
    with db.snapshot() as conn:
        kept = conn.hints.get(_BOARD)
        board = _current(conn, kept if isinstance(kept, Board) else None, boards.version_of(conn))
        if keep and board is not kept:
            conn.hints[_BOARD] = board
        now = utc_now()
        answered = board.answers.get((limit, principal))
        if answered is not None and (answered[1] is None or now < answered[1]):
            return answered[0]
        blocked, blocked_total = board.blocked
        actions = _actions(conn, board, principal, now, limit)
        answer = NextActions(actions=actions, blocked=blocked, blocked_total=blocked_total)
        if all(action.action != "take_over" for action in actions):
            if len(board.answers) >= KEPT_ANSWERS:
                board.answers.pop(next(iter(board.answers)))
            board.answers[(limit, principal)] = (answer, board.until(now))
        return answer


def current_board(conn: Connection) -> Board:
    """The board as this write transaction sees it: kept by it or earlier (when the version still
    holds), else read now. The caller keeps what it makes of it in `conn.memo`."""
    version = boards.version_of(conn)
    for kept in (conn.memo.get(_BOARD), conn.hints.get(_BOARD)):
        if isinstance(kept, Board):
            return _current(conn, kept, version)
    return boards.read(conn, version, stuck)


def _current(conn: Connection, kept: Board | None, version: int) -> Board:
    """The board at `version`: the kept reading if it is that one, else the kept reading caught up
    with the tasks changed since (changes.py), else a whole read."""
    if kept is not None:
        if kept.version == version:
            return kept
        if kept.version < version:
            board = changes.caught_up(conn, kept, version)
            if board is not None:
                return board
    return boards.read(conn, version, stuck)


def keep_board(conn: Connection, board: Board) -> None:
    """Kept for the rest of this transaction, and for later ones once it commits (storage/memo.py)."""
    conn.memo[_BOARD] = board


def _actions(conn: Connection, board: Board, principal: str, now: str, limit: int) -> list[Action]:
    chosen = [i for *_, i in heapq.nsmallest(limit, boards.ready(board, principal, now))]
    ids = board.backlog.ids
    full = repository.get_tasks(conn, [ids[i] for i in chosen])
    actions = []
    for i in chosen:
        kind = board.kind(i, principal, now)
        assert kind is not None
        actions.append(action(full[ids[i]], kind, board.unblocks[i], now))
    return actions


def action(task: Task, kind: ActionKind, unblocks: int, now: str) -> Action:
    return Action(task=task, action=kind, reason=_reason(task, kind, unblocks, now), unblocks=unblocks)


def _reason(task: Task, kind: ActionKind, unblocks: int, now: str) -> str:
    priority, lease = task.priority, task.lease
    unblocking = f"; unblocks {plural(unblocks, 'open task')}" if unblocks else ""
    if kind == "take_over":
        assert lease is not None
        return (
            f"{lease.holder}'s lease ended {leases.span(lease.expires_at, now)} ago, {priority} "
            f"priority{unblocking}; take it over with task_update(take_over=true), then finish it"
        )
    if kind == "continue":
        yours = ""
        if lease is not None:
            # The time itself, not how long is left: an answer is kept while the board holds.
            ends = "ended" if lease.expired else "ends"
            yours = f" under your lease ({ends} {lease.expires_at})"
        return (
            f"in progress{yours}, {priority} priority{unblocking}; finish it, then move it to review "
            "(any update renews the lease)"
        )
    if kind == "review":
        return (
            f"waiting for review, {priority} priority{unblocking}; check the work, write it back "
            "(thought_record citing the task), then move it to done, or back to in_progress"
        )
    count = len(task.depends_on)
    deps = f"all {plural(count, 'dependency')} done" if count else "no dependencies"
    return f"ready to start ({deps}), {priority} priority{unblocking}; move it to in_progress"


def plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {plural}"
