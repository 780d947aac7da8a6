"""The lean lane facing a stdio client: tools/call read, routed and answered as JSON, beside the SDK.

The stdio edge (`pipes`) shows every line to `ClientLane.take` before the SDK parses it. A
`tools/call` for a routed tool (`server.tool` or a fallback capability) from a client past its
handshake (or a 2026-era request naming a version the SDK serves) is taken here: routed by the
same `Router` (health admission and verdicts, fallback, never repeating a non-idempotent call,
filtering, metrics, the same envelopes) and, on a stdio downstream, sent down its lean lane
(lanes.py). Everything else — the handshake, lists, `switchboard_status`, malformed input,
arguments that are not an object, resources, prompts, relays — goes to the SDK as before.

The client's `notifications/cancelled` for a call taken here cancels it (and the downstream is
told); progress goes back with the client's own token; the answer carries the client's id. At the
end of input, the reader waits for the answers of the calls taken here (bounded) before it ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeGuard

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri.pipes import LineWriter
from colibri.switchboard import envelopes
from colibri.switchboard.contracts import Caller, ResultT
from colibri.switchboard.errors import HANDLER_ERROR
from colibri.switchboard.gateway import Switchboard
from colibri.switchboard.lanes import dumps
from colibri.switchboard.transport import SERVER_INFO_META

log = logging.getLogger("colibri.switchboard")

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
# Only lines naming one of these can be ours; the rest go to the SDK without being parsed twice.
_CALL, _CANCELLED, _INITIALIZE = b'"tools/call"', b'"notifications/cancelled"', b'"initialize"'
# A UTF-16 surrogate escape: the SDK answers a lone one with -32602, so such lines stay with it.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(slots=True)
class _Call:
    request_id: types.RequestId
    name: str
    arguments: dict[str, Any] | None
    token: object
    modern: bool
    task: asyncio.Task[None] | None = None
    cancelled: bool = False


class ClientLane:
    """Takes the routed tools/call requests of one stdio client off the SDK's path (a `pipes.Divert`)."""

    def __init__(self, board: Switchboard, server_info: dict[str, Any], limit_s: float) -> None:
        self._board = board
        self._server_info = server_info
        self._limit_s = limit_s
        self._writer: LineWriter | None = None
        self._running = False
        self._calls: dict[types.RequestId, _Call] = {}
        self._idle = anyio.Event()
        self._idle.set()
        self._initialized = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Take calls inside this block; the calls still running at its end are cancelled."""
        self._running = True
        try:
            yield
        finally:
            self._running = False
            for call in list(self._calls.values()):
                if call.task is not None:
                    call.task.cancel()

    def attach(self, writer: LineWriter) -> None:
        self._writer = writer

    async def drained(self) -> None:
        with anyio.move_on_after(self._limit_s):
            await self._idle.wait()

    def take(self, line: bytes) -> bool:
        # Lines arrive here from the moment the pipe is open: the handshake may come before
        # `running()` or `attach()`, and is noted all the same.
        if _CALL not in line and _CANCELLED not in line and _INITIALIZE not in line:
            return False
        if b"\\u" in line and _SURROGATE.search(line):
            return False
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method, params = message.get("method"), message.get("params")
        if method == "initialize":
            self._initialized = True
            return False
        if not self._running or self._writer is None or not isinstance(params, dict):
            return False
        if method == "notifications/cancelled" and "id" not in message:
            return self._cancel(params.get("requestId"))
        request_id = message.get("id")
        if method != "tools/call" or not _valid_id(request_id) or request_id in self._calls:
            return False
        name, arguments, meta = params.get("name"), params.get("arguments"), params.get("_meta")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return False
        meta = meta if isinstance(meta, dict) else {}
        version = meta.get(PROTOCOL_VERSION_META)
        modern = version is not None
        if (version not in MODERN_PROTOCOL_VERSIONS if modern else not self._initialized) or (
            not self._board.router.leanable(name)
        ):
            return False
        call = _Call(request_id, name, arguments, meta.get("progressToken"), modern)
        self._calls[request_id] = call
        self._idle = anyio.Event()
        # A bare task: this is the hot path, and `running()` cancels what is left at the end.
        call.task = asyncio.get_running_loop().create_task(self._serve(call))
        return True

    def _cancel(self, request_id: object) -> bool:
        call = self._calls.get(request_id) if _valid_id(request_id) else None
        if call is None or call.task is None:
            return False
        call.cancelled = True  # the call is never answered, as JSON-RPC cancellation has it
        call.task.cancel()
        return True

    async def _serve(self, call: _Call) -> None:
        try:
            answer = {"jsonrpc": "2.0", "id": call.request_id}
            answer |= await self._answer(call.name, call.arguments, LeanCaller(self, call.token), call.modern)
        except asyncio.CancelledError:
            if call.cancelled:
                return
            raise
        finally:
            self._calls.pop(call.request_id, None)
            if not self._calls:
                self._idle.set()
        self.send(answer)
        await self.flush()

    async def _answer(
        self, name: str, arguments: dict[str, Any] | None, caller: Caller, modern: bool
    ) -> dict[str, Any]:
        try:
            result = await self._board.call_raw(name, arguments, caller)
        except MCPError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.error.message}
            if exc.error.data is not None:
                error["data"] = exc.error.data
            return {"error": error}
        except Exception as exc:  # what the SDK path answers too (server.py): an envelope, not a crash
            log.exception("switchboard failed routing %s", name)
            result = envelopes.error(
                HANDLER_ERROR,
                f"the switchboard failed: {exc}",
                schemas=self._board.router.schemas_for(name),
                tool=name,
            )
        body = (
            result
            if isinstance(result, dict)
            else result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        if modern:
            # What the SDK server adds to a 2026-era answer: the result type and its own identity.
            meta = dict(body.get("_meta") or {}) | {SERVER_INFO_META: self._server_info}
            body = {"resultType": "complete"} | body | {"_meta": meta}
        return {"result": body}

    def send(self, message: dict[str, Any]) -> None:
        if self._writer is None:
            return
        try:
            self._writer.write_line(dumps(message))
        except anyio.ClosedResourceError:
            log.debug("could not write to the client: it stopped reading")

    async def flush(self) -> None:
        if self._writer is not None:
            try:
                await self._writer.drain()
            except anyio.BrokenResourceError:
                log.debug("could not write to the client: it stopped reading")


class LeanCaller:
    """A call taken by the lean lane as the `Caller` of its downstream call."""

    def __init__(self, lane: ClientLane, token: object) -> None:
        self._lane = lane
        self._token = token if _valid_id(token) else None

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._token is None:
            return
        params: dict[str, Any] = {"progressToken": self._token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._lane.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        self._lane.send({"jsonrpc": "2.0", "method": "notifications/message", "params": data})

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        # A downstream's own request during the call goes to the connection the SDK knows.
        caller = self._lane._board.default_caller()
        if caller is None:
            raise MCPError(INVALID_REQUEST, f"no client is connected to answer {request.method}")
        return await caller.request(request, result_type)


def _valid_id(value: object) -> TypeGuard[types.RequestId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
