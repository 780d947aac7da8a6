"""η tool handlers: validated arguments in, output model out; the rules live in sessions.py."""

from __future__ import annotations

from colibri.core.spec import ToolContext
from colibri.domains.log import api as log
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
    """merkle_finalize: the seal, and a signed checkpoint of the log made with it."""
    db, notary = ctx.database(), ctx.server.notary
    with db.atomic() as conn:  # the seal and its checkpoint commit together
        sealed = sessions.finalize(db, args.session_id)
        if notary is None:
            return sealed
        checkpoint = notary.make(conn, log.SEAL, session_id=args.session_id)
    return sealed.model_copy(update={"checkpoint": checkpoint.note})


def root(ctx: ToolContext, args: RootArgs) -> RootAnswer:
    """merkle_root, with the checkpoint made at the seal."""
    db = ctx.database()
    answer = sessions.root(db, args.session_id, args.record_id)
    checkpoint = log.seal_checkpoint(db, args.session_id)
    return answer if checkpoint is None else answer.model_copy(update={"checkpoint": checkpoint.note})
