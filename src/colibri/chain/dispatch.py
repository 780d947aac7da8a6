"""Stage 4 — dispatch: run the handler (writers inside one transaction) and shape its result."""

from __future__ import annotations

from colibri.chain import envelope
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.tools.spec import ToolContext


class Dispatch:
    def __init__(self, deps: ChainDeps) -> None:
        self._state = deps.state

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        tool, arguments = call.tool, call.arguments
        assert tool is not None and arguments is not None
        db = self._state.db
        context = ToolContext(server=self._state, db=db)
        try:
            if tool.writes and db is not None:
                with db.atomic():
                    result = tool.handler(context, arguments)
            else:
                result = tool.handler(context, arguments)
            call.envelope = envelope.success(result)
        except Exception as exc:  # noqa: BLE001 - every handler failure becomes an envelope; nothing escapes the chain
            call.envelope = envelope.from_exception(exc, tool)
        return await call_next(call)
