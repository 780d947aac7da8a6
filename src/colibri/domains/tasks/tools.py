from __future__ import annotations

from colibri.core.modes import ToolClass
from colibri.core.spec import ErrorPattern, Tool

_REFUSALS = ' A refusal comes back as data {"ok": false, "error": {"code", "message", ...}}: check data.ok.'

TOOLS = [
    Tool(
        name="task_create",
        title="Create a task",
        description=(
            "Add a task - a ticket or to-do on the team's board (its backlog) - and get it back with "
            "its id (e.g. T-7) and version 1. Only title is required; priority defaults to medium and "
            "status to todo; assignee says who works on it, tags file it. depends_on lists tasks that "
            "must be done before this one can start; they must exist and must not form a cycle "
            "(ERR_NOT_FOUND, ERR_DEPENDENCY_CYCLE)." + _REFUSALS
        ),
        input_model="colibri.domains.tasks.arguments:CreateTaskArgs",
        output_model="colibri.domains.tasks.models:Task",
        handler="colibri.domains.tasks.handlers:task_create",
        tool_class=ToolClass.WRITE,
        quick=True,
        pattern=ErrorPattern.B,
    ),
    Tool(
        name="task_get",
        title="Get a task",
        description=(
            "Look up one task (ticket) on the board by id, e.g. T-7: its fields, its full change "
            "history (oldest first) and `blocks`: the ids of the tasks waiting on it. Unknown id: "
            "ERR_NOT_FOUND." + _REFUSALS
        ),
        input_model="colibri.domains.tasks.arguments:GetTaskArgs",
        output_model="colibri.domains.tasks.models:TaskDetail",
        handler="colibri.domains.tasks.handlers:task_get",
        tool_class=ToolClass.READ,
        pattern=ErrorPattern.B,
    ),
    Tool(
        name="task_update",
        title="Update a task",
        description=(
            "Change a task on the board - start it, send it to review, mark it done, block, cancel or "
            "reopen it, or edit its title, priority, assignee, tags or dependencies - and get it back "
            "(version +1; fields you omit keep their value; an update that changes nothing returns "
            "the task as it is). "
            "Status moves follow the state machine: todo → in_progress|blocked|cancelled; "
            "in_progress → review|blocked|todo|cancelled; blocked → todo|in_progress|cancelled; "
            "review → done|in_progress; cancelled → todo; done is final (ERR_INVALID_TRANSITION "
            "lists the allowed moves). in_progress needs every dependency done "
            "(ERR_DEPENDENCIES_OPEN). done needs a writeback first: at least one thought_record "
            "citing the task_id, of any kind (kind writeback says it best) (ERR_WRITEBACK_REQUIRED). "
            "Pass the version you read as expected_version so a concurrent change is refused "
            "(ERR_CONFLICT) instead of overwritten. Leases: moving a task to in_progress leases it to "
            "you for lease_s seconds (10-86,400, default 900; task.lease shows holder, expiry and "
            "token) and any update of yours renews it; while it runs another caller's write is "
            "ERR_LEASED (naming holder and expiry); once it has ended, take_over=true moves it to "
            "you. Pass lease.token as lease_token: if the task was taken over meanwhile, nothing is "
            "written (ERR_CONFLICT)." + _REFUSALS
        ),
        input_model="colibri.domains.tasks.arguments:UpdateTaskArgs",
        output_model="colibri.domains.tasks.models:Task",
        handler="colibri.domains.tasks.handlers:task_update",
        tool_class=ToolClass.WRITE,
        quick=True,
        pattern=ErrorPattern.B,
        # Overwrites fields (the history keeps the old values); repeating it changes nothing more.
        destructive=True,
        idempotent=True,
    ),
    Tool(
        name="task_list",
        title="List tasks",
        description=(
            "Show the tasks on the board (the backlog), oldest first, filtered by status (one or "
            "several: todo and in_progress are what is still open), tag, assignee (who is on it) "
            "and/or text in title or description (filters combine with AND). Returns {tasks, "
            "next_cursor}; pass "
            "next_cursor back as cursor for the next page (null means this was the last page)."
        ),
        input_model="colibri.domains.tasks.arguments:ListTasksArgs",
        output_model="colibri.domains.tasks.models:TaskPage",
        handler="colibri.domains.tasks.handlers:task_list",
        tool_class=ToolClass.READ,
        pattern=ErrorPattern.B,
    ),
    Tool(
        name="task_next_actions",
        title="Suggest what to do next",
        description=(
            "What to work on next, picked from the board: up to `limit` actions (default 5), each "
            "{task, action, reason, unblocks}: "
            "first continue (tasks in_progress that you hold, or nobody does), then review (tasks in "
            "review), then start (todo tasks whose dependencies are all done) and take_over "
            "(in_progress tasks whose holder's lease ended), ranked by priority, then by how many open "
            "tasks they unblock, then oldest first; tasks others hold under a running lease are left "
            "out. Also lists blocked tasks with what they wait on. With claim=true (a write) the first "
            "start or take_over is claimed for you atomically, on any replica: moved to in_progress "
            "under your lease (lease_s) and returned as the only action, lease.token to pass as "
            "lease_token; with nothing to claim, actions is empty and reason says why." + _REFUSALS
        ),
        input_model="colibri.domains.tasks.arguments:NextActionsArgs",
        output_model="colibri.domains.tasks.models:NextActions",
        handler="colibri.domains.tasks.handlers:task_next_actions",
        tool_class=ToolClass.READ,
        pattern=ErrorPattern.B,
        writes_when="claim",
    ),
]
