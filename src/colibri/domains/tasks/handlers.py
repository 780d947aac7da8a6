"""The task tools' handlers: thin adapters from validated arguments to the domain functions."""

from __future__ import annotations

from colibri.core.spec import ToolContext
from colibri.domains.tasks import claims, listing, next_actions, service
from colibri.domains.tasks.arguments import (
    CreateTaskArgs,
    GetTaskArgs,
    ListTasksArgs,
    NextActionsArgs,
    UpdateTaskArgs,
)
from colibri.domains.tasks.models import NextActions, Task, TaskDetail, TaskPage


def task_create(ctx: ToolContext, args: CreateTaskArgs) -> Task:
    return service.create_task(ctx.database(), args, principal=ctx.principal)


def task_get(ctx: ToolContext, args: GetTaskArgs) -> TaskDetail:
    return service.get_task_detail(ctx.database(), args.task_id)


def task_update(ctx: ToolContext, args: UpdateTaskArgs) -> Task:
    return service.update_task(ctx.database(), args, principal=ctx.principal)


def task_list(ctx: ToolContext, args: ListTasksArgs) -> TaskPage:
    return listing.list_tasks(ctx.database(), args)


def task_next_actions(ctx: ToolContext, args: NextActionsArgs) -> NextActions:
    if args.claim:  # the chain ran this call as a write (Tool.writes_when): it is in a transaction
        return claims.claim(ctx.database(), ctx.principal, args.lease_s)
    return next_actions.next_actions(ctx.database(), args.limit, ctx.principal)
