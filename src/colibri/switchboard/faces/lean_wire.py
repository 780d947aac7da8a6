"""What the lean lane (lean.py) writes back: the JSON-RPC body of a result or an error, on its `Wire`."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types

from colibri.pipes import LineWriter
from colibri.switchboard.base import jsonlines
from colibri.switchboard.downstream import SERVER_INFO_META
from colibri.switchboard.routing import Answer

log = logging.getLogger("colibri.switchboard")


class Wire:
    """The client's stdout as the lean lane writes it: whole JSON-RPC messages, one per line."""

    def __init__(self) -> None:
        self.writer: LineWriter | None = None

    def send(self, message: dict[str, Any]) -> None:
        if self.writer is None:
            return
        try:
            self.writer.write_line(jsonlines.dumps(message))
        except anyio.ClosedResourceError:
            log.debug("could not write to the client: it stopped reading")

    async def flush(self) -> None:
        if self.writer is not None:
            try:
                await self.writer.drain()
            except anyio.BrokenResourceError:
                log.debug("could not write to the client: it stopped reading")


def answer_body(answer: Answer, server_info: dict[str, Any] | None) -> dict[str, Any]:
    """`{"result": ...}`, or a downstream's JSON-RPC error as itself (`{"error": ...}`).

    `server_info` is given for a 2026-era request: its answer carries what the SDK server adds.
    """
    if answer.error is not None:
        error: dict[str, Any] = {"code": answer.error.code, "message": answer.error.error.message}
        if answer.error.error.data is not None:
            error["data"] = answer.error.error.data
        return {"error": error}
    result = answer.result
    assert result is not None, "an answer that goes back has a result or an error"
    if isinstance(result, dict):
        body = result
    else:
        body = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if server_info is None:  # the 2026 era's field, which the SDK leaves out of older eras' answers
            body.pop("resultType", None)
    return {"result": body if server_info is None else stamped(body, server_info)}


def stamped(result: dict[str, Any], server_info: dict[str, Any]) -> dict[str, Any]:
    """What the SDK server adds to a 2026-era answer: the result type and its own identity."""
    meta = dict(result.get("_meta") or {}) | {SERVER_INFO_META: server_info}
    return {"resultType": "complete"} | result | {"_meta": meta}


def outcome_of(answer: Answer) -> types.CallToolResult | types.ErrorData:
    """The answer of a call held between input rounds, as its last round gives it to the client."""
    if answer.error is not None:
        return answer.error.error
    result = answer.result
    assert result is not None, "an answer that goes back has a result or an error"
    if isinstance(result, types.CallToolResult):
        return result
    raw = (
        result
        if isinstance(result, dict)
        else result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    return types.CallToolResult.model_validate(raw)
