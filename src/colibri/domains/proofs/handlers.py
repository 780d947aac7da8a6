"""η tool handlers: validated arguments in, output model out; the rules live in sessions.py."""

from __future__ import annotations

from colibri.domains.log import notary as log_notary
from colibri.domains.log import store as log_store
from colibri.domains.proofs import sessions
from colibri.domains.proofs.models import (
    FinalizeArgs,
    Finalized,
    RootAnswer,
    RootArgs,
    SessionStartArgs,
    SessionStarted,
)
from colibri.tools.spec import ToolContext


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
        checkpoint = notary.make(conn, log_notary.SEAL, session_id=args.session_id)
    return sealed.model_copy(update={"checkpoint": checkpoint.note})


def root(ctx: ToolContext, args: RootArgs) -> RootAnswer:
    """merkle_root, with the checkpoint made at the seal."""
    conn = ctx.database().conn
    answer = sessions.root(conn, args.session_id, args.record_id)
    checkpoint = log_store.seal_checkpoint(conn, args.session_id)
    return answer if checkpoint is None else answer.model_copy(update={"checkpoint": checkpoint.note})
