"""η tool handlers: validated arguments in, output model out; the rules live in sessions.py."""

from __future__ import annotations

from colibri.core.spec import ToolContext
from colibri.domains.proofs import sessions
from colibri.domains.proofs.models import (
    FinalizeArgs,
    Finalized,
    RootAnswer,
    RootArgs,
    SessionStartArgs,
    SessionStarted,
)


def session_start(ctx: ToolContext, args: SessionStartArgs) -> SessionStarted:
    """audit_session_start."""
    return sessions.start(ctx.database(), args.session_id, args.agent_id, args.purpose)


def finalize(ctx: ToolContext, args: FinalizeArgs) -> Finalized:
    """merkle_finalize."""
    return sessions.finalize(ctx.database(), args.session_id)


def root(ctx: ToolContext, args: RootArgs) -> RootAnswer:
    """merkle_root."""
    return sessions.root(ctx.database(), args.session_id, args.record_id)
