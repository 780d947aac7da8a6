"""`ask_user` mode (SPEC §22): the calling session's own user decides, through an elicitation.

The question goes to the client of the held call itself (its `Caller`): on its own connection for a
handshake-era client, as an input request of its call's rounds for a 2026-era one (faces/rounds.py),
so it reaches that session's user and nobody else. It shows the tool and the arguments in full and
asks for `approve` (a boolean) and an optional `comment`. The answer is logged as an approver's
(`via: ask_user`, the caller as the one who decided): accepted with `approve` true → the call goes;
declined, cancelled or `approve` false → APPROVAL_DENIED; a client that did not declare elicitation
→ APPROVAL_REQUIRED (the hold stays `unasked` in the store); no answer in `timeout_s` →
APPROVAL_PENDING.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from colibri.core.clock import utc_now
from colibri.core.database import Connection
from colibri.core.shown import shown as escaped
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.switchboard.audit.writer import Now, Writer
from colibri.switchboard.base import APPROVAL_DENIED, APPROVAL_PENDING, APPROVAL_REQUIRED, Caller
from colibri.switchboard.routing import Refusal, RoutedCall

log = logging.getLogger("colibri.switchboard")
T = TypeVar("T")
WHOLE = 1_000_000  # the arguments are shown in full: the user judges all of them

SCHEMA = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Run this call?",
            "description": "true runs it, false refuses it",
        },
        "comment": {"type": "string", "title": "Comment", "description": "why (kept in the audit log)"},
    },
    "required": ["approve"],
}


async def ask_user(  # noqa: PLR0917 - the held call, and who is asked how long
    writer: Writer, approval_id: str, call: RoutedCall, target: str, caller: Caller | None, timeout_s: float
) -> Refusal | None:
    """Ask the caller's own user about the held call `approval_id`: None to send it, else the refusal."""
    if caller is None:
        return await _unasked(writer, approval_id, target, "no client waits for it")
    lines = json.dumps(call.arguments or {}, indent=2, sort_keys=True, ensure_ascii=False).split("\n")
    question = types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            # A caller's and a downstream's text: its controls and bidi characters escaped, never obeyed.
            message="\n".join(
                escaped(line, WHOLE)
                for line in (
                    f"Approve this call? {call.principal} asks to run {target} with the arguments",
                    *lines,
                )
            ),
            requested_schema=SCHEMA,
        )
    )
    try:
        with anyio.fail_after(timeout_s):
            answer = await caller.request(question, types.ElicitResult)
    except TimeoutError:
        return Refusal(
            APPROVAL_PENDING,
            f"{target} needs its user's approval and no answer came within {timeout_s:g} s; the call may "
            "be made again, and its user is asked again",
            {"approval_id": approval_id, "retry_after_s": 1},
        )
    except MCPError as exc:
        return await _unasked(writer, approval_id, target, exc.error.message)
    content = answer.content or {}
    approve = answer.action == "accept" and content.get("approve", True) is not False
    comment = content.get("comment")
    said = (
        comment if isinstance(comment, str) else ("" if approve else f"the user's answer was {answer.action}")
    )
    now = utc_now()

    def decided(conn: Connection) -> bool:
        approvals.decide(conn, approval_id, approve, call.principal, (), said, "ask_user", now, log_action)
        return approvals.use(conn, approval_id, now) if approve else False

    if await _write(writer, decided):
        log.info("%s of %s goes on: its user approved it", target, call.principal)
        return None
    return Refusal(
        APPROVAL_DENIED,
        f"{target} was denied by its user ({call.principal})" + (f": {said}" if said else ""),
        {"approval_id": approval_id, "denied_by": call.principal, "comment": said},
    )


async def _unasked(writer: Writer, approval_id: str, target: str, why: str) -> Refusal:
    await _write(writer, lambda conn: approvals.unasked(conn, approval_id))
    return Refusal(
        APPROVAL_REQUIRED,
        f"{target} needs its user's approval, and this client cannot be asked ({why}): use a client that "
        "declares the elicitation capability, or ask for an approver rule",
        {"approval_id": approval_id},
    )


async def _write(writer: Writer, work: Callable[[Connection], T]) -> T:
    written = writer.write(work)
    if isinstance(written, Now):
        return written.value
    result: T = await written
    return result
