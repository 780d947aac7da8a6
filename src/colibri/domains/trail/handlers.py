"""ζ tool handlers: validated arguments in, output model out; the rules live beside them."""

from __future__ import annotations

from dataclasses import asdict

from colibri.core.spec import ToolContext
from colibri.domains.log import api as log_api
from colibri.domains.trail import records
from colibri.domains.trail.models import (
    ChainBreak,
    ListArgs,
    Record,
    RecordPage,
    SealStatus,
    ThoughtRecordArgs,
    ThoughtRecorded,
    Verification,
    VerifyArgs,
)
from colibri.domains.trail.verify import verify


def thought_record(ctx: ToolContext, args: ThoughtRecordArgs) -> ThoughtRecorded:
    """thought_record."""
    record = records.append(
        ctx.database(),
        args.session_id,
        args.kind,
        args.content,
        task_id=args.task_id,
        agent_id=args.agent_id,
        principal=ctx.principal,
    )
    return ThoughtRecorded(
        record_id=record.record_id,
        seq=record.seq,
        session_id=record.session_id,
        hash=record.hash,
        prev_hash=record.prev_hash,
        created_at=record.created_at,
    )


def thought_record_list(ctx: ToolContext, args: ListArgs) -> RecordPage:
    """thought_record_list."""
    rows, next_cursor = records.page(
        ctx.database(),
        session_id=args.session_id,
        task_id=args.task_id,
        kind=args.kind,
        cursor=args.cursor,
        limit=args.limit,
    )
    return RecordPage(records=[Record(**asdict(row)) for row in rows], next_cursor=next_cursor)


def audit_verify_chain(ctx: ToolContext, args: VerifyArgs) -> Verification:
    """audit_verify_chain."""
    report = verify(ctx.database(), session_id=args.session_id, from_seq=args.from_seq, to_seq=args.to_seq)
    brk = report.first_break
    seal = report.seals[0] if report.seals else None
    db = ctx.database()
    log = None if args.from_seq is not None or args.to_seq is not None else log_api.log_status(db)
    return Verification(
        valid=report.valid and (log is None or log.valid),
        checked=report.checked,
        head_hash=report.head_hash,
        first_break=None if brk is None else ChainBreak(**asdict(brk)),
        seal=None if seal is None else SealStatus(**asdict(seal), valid=seal.valid),
        log=log,
    )
