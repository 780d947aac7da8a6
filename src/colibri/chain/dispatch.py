"""Stage 4 — dispatch: run the handler and shape its result.

A write tool runs inside the transaction audit-enter opened, which also holds its audit row
and, after audit-exit, its outcome: all commit together or not at all. The handler itself runs
in a savepoint, so a handler that raises has its writes rolled back while its row stays, and
audit-exit records the error.
"""

from __future__ import annotations

from colibri.chain import envelope
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core.spec import Tool, ToolContext


class Dispatch:
    def __init__(self, deps: ChainDeps) -> None:
        self._state = deps.state

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        tool = call.tool
        assert tool is not None
        db = self._state.db
        context = ToolContext(server=self._state, db=db, principal=call.caller.principal)
        try:
            if call.writes and db is not None:
                with db.atomic():
                    call.envelope = self._run(tool, context, call)
            else:
                call.envelope = self._run(tool, context, call)
        except Exception as exc:  # noqa: BLE001 - every handler failure becomes an envelope; nothing escapes
            call.envelope = envelope.from_exception(exc, tool)
        return await call_next(call)

    @staticmethod
    def _run(tool: Tool, context: ToolContext, call: Call) -> Envelope:
        return envelope.success(tool.handle(context, call.arguments))
