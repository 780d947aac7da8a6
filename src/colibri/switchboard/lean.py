"""The lean lane facing a stdio client: tools/call read, routed and answered as JSON, beside the SDK.

The stdio edge (`pipes`) shows every line to `ClientLane.take` before the SDK parses it. A
`tools/call` for a routed tool (`server.tool` or a fallback capability) from a client past its
handshake (or a 2026-era request naming a version the SDK serves) is taken here: routed by the
same `Router` (health admission and verdicts, fallback, never repeating a non-idempotent call,
filtering, metrics, the same envelopes) and, on a stdio downstream, sent down its lean lane
(lanes.py). It is routed and sent from the pipe's callback and answered from the downstream's,
with no task in between (walk.py keeps the rules of routing apart from how they are driven); a
task serves it only where something must wait. Everything else — the handshake, lists,
`switchboard_status`, malformed input, arguments that are not an object, resources, prompts,
relays — goes to the SDK as before.

The client's `notifications/cancelled` for a call taken here cancels it (and the downstream is
told); progress goes back with the client's own token; the answer carries the client's id. At the
end of input, the reader waits for the answers of the calls taken here (bounded) before it ends.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri.pipes import LineWriter
from colibri.switchboard import envelopes
from colibri.switchboard.contracts import Abandon
from colibri.switchboard.errors import HANDLER_ERROR, DownstreamError
from colibri.switchboard.gateway import Switchboard
from colibri.switchboard.jsonlines import dumps, loads
from colibri.switchboard.lean_caller import LeanCaller, valid_id
from colibri.switchboard.results import SERVER_INFO_META
from colibri.switchboard.walk import Attempt, Walk

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
    abandon: Abandon | None = None
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
        self._idle: anyio.Event | None = None  # made only when someone waits for the calls to end
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
                elif call.abandon is not None:
                    call.abandon("the switchboard is stopping")
                    self._forget(call)

    def attach(self, writer: LineWriter) -> None:
        self._writer = writer

    async def drained(self) -> None:
        if not self._calls:
            return
        self._idle = idle = anyio.Event()
        with anyio.move_on_after(self._limit_s):
            await idle.wait()

    def take(self, line: bytes) -> bool:
        # Lines arrive here from the moment the pipe is open: the handshake may come before
        # `running()` or `attach()`, and is noted all the same.
        if _CALL not in line and _CANCELLED not in line and _INITIALIZE not in line:
            return False
        if b"\\u" in line and _SURROGATE.search(line):
            return False
        try:
            message = loads(line)
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
        if method != "tools/call" or not valid_id(request_id) or request_id in self._calls:
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
        self._start(call)
        return True

    def _cancel(self, request_id: object) -> bool:
        call = self._calls.get(request_id) if valid_id(request_id) else None
        if call is None:
            return False
        call.cancelled = True  # the call is never answered, as JSON-RPC cancellation has it
        if call.task is not None:
            call.task.cancel()
        elif call.abandon is not None:
            call.abandon("the client cancelled the call")
            self._forget(call)
        return True

    # A call is routed right here, in the pipe's callback, and answered from the downstream's: two
    # turns of the event loop where a task took four. A task serves it only where something must
    # wait (the first verdicts, or a downstream without a lean lane).

    def _start(self, call: _Call) -> None:
        if self._board.waits_for_start(call.name):
            self._spawn(call, self._serve(call))
            return
        with self._answering(call):
            walk = self._board.router.walk(call.name)
            self._go(call, walk, walk.next() if isinstance(walk, Walk) else walk)

    def _go(
        self, call: _Call, walk: Walk | types.CallToolResult, step: Attempt | types.CallToolResult
    ) -> None:
        caller = LeanCaller(self.send, self._board.default_caller, call.token)
        while isinstance(step, Attempt):
            assert isinstance(walk, Walk)
            done = partial(self._answered, call, walk, step)
            tool, arguments = step.target.tool, call.arguments
            try:
                abandon = step.downstream.send_raw(
                    step.ticket, tool, arguments, caller, progress=caller.tell, done=done
                )
            except DownstreamError as exc:
                step = walk.failed(step, exc)
                continue
            if abandon is None:
                self._spawn(call, self._serve(call, walk, step))
            call.abandon = abandon
            return
        self._finish(call, {"result": self._body(step, call.modern)})

    def _answered(
        self, call: _Call, walk: Walk, step: Attempt, outcome: dict[str, Any] | DownstreamError
    ) -> None:
        call.abandon = None
        if isinstance(outcome, DownstreamError):
            with self._answering(call):
                self._go(call, walk, walk.failed(step, outcome))
            return
        with self._answering(call):
            self._finish(call, {"result": self._body(outcome, call.modern)})
        walk.answered(step, outcome)  # metrics, once the answer is on its way

    @contextmanager
    def _answering(self, call: _Call) -> Iterator[None]:
        """What goes wrong routing `call` is its answer: a downstream's JSON-RPC error as itself,
        anything else as HANDLER_ERROR, as the SDK path answers (server.py) — never a crash."""
        try:
            yield
        except MCPError as exc:
            self._finish(call, _error(exc))
        except Exception as exc:
            log.exception("switchboard failed routing %s", call.name)
            result = envelopes.error(
                HANDLER_ERROR,
                f"the switchboard failed: {exc}",
                schemas=self._board.router.schemas_for(call.name),
                tool=call.name,
            )
            self._finish(call, {"result": self._body(result, call.modern)})

    def _spawn(self, call: _Call, serving: Coroutine[Any, Any, None]) -> None:
        # A bare task: `running()` cancels what is left at the end.
        call.task = asyncio.get_running_loop().create_task(serving)

    def _forget(self, call: _Call) -> None:
        self._calls.pop(call.request_id, None)
        if not self._calls and self._idle is not None:
            self._idle.set()

    def _finish(self, call: _Call, answer: dict[str, Any]) -> None:
        self._forget(call)
        if not call.cancelled:
            self.send({"jsonrpc": "2.0", "id": call.request_id} | answer)

    async def _serve(self, call: _Call, walk: Walk | None = None, step: Attempt | None = None) -> None:
        caller = LeanCaller(self.send, self._board.default_caller, call.token)
        try:
            with self._answering(call):
                if walk is None or step is None:
                    result = await self._board.call_raw(call.name, call.arguments, caller)
                else:
                    result = await self._board.router.follow(walk, step, call.arguments, caller, raw=True)
                self._finish(call, {"result": self._body(result, call.modern)})
        except asyncio.CancelledError:
            self._forget(call)
            if call.cancelled:
                return
            raise
        await self.flush()

    def _body(self, result: types.CallToolResult | dict[str, Any], modern: bool) -> dict[str, Any]:
        body = (
            result
            if isinstance(result, dict)
            else result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        if modern:
            # What the SDK server adds to a 2026-era answer: the result type and its own identity.
            meta = dict(body.get("_meta") or {}) | {SERVER_INFO_META: self._server_info}
            body = {"resultType": "complete"} | body | {"_meta": meta}
        return body

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


def _error(exc: MCPError) -> dict[str, Any]:
    error: dict[str, Any] = {"code": exc.code, "message": exc.error.message}
    if exc.error.data is not None:
        error["data"] = exc.error.data
    return {"error": error}
