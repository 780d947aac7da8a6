"""The lean lane facing a stdio client: tools/call read, routed and answered as JSON, beside the SDK.

The stdio edge (`pipes`) shows every line to `ClientLane.take` before the SDK parses it. A
`tools/call` for a routed tool (`server.tool` or a fallback capability) from a client past its
handshake (or a 2026-era request naming a version the SDK serves) is taken here: it takes the same
`Route` as every call (routing/route.py: health admission and verdicts, fallback, never repeating a
non-idempotent call, filtering, the observers, the same envelopes) and, on a downstream with a lean
lane, is sent down it (downstream/lanes.py). It is routed and sent from the pipe's callback and
answered from the downstream's, driven as the HTTP face's lane drives its calls (driving.py).
Everything else — the handshake, lists,
`switchboard_status`, malformed input, arguments that are not an object, resources, prompts,
relays — goes to the SDK as before.

The client's `notifications/cancelled` for a call taken here cancels it (and the downstream is
told); progress goes back with the client's own token; the answer carries the client's id. At the
end of input, the reader waits for the answers of the calls taken here (bounded) before it ends.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri.pipes import LineWriter
from colibri.switchboard.base import ResultT, jsonlines, spans
from colibri.switchboard.faces.driving import Driver
from colibri.switchboard.faces.lean_caller import LeanCall, LeanCaller, valid_id
from colibri.switchboard.faces.lean_wire import Wire, answer_body, outcome_of, stamped
from colibri.switchboard.faces.rounds import InputRounds, capabilities_of
from colibri.switchboard.routing import Answer, Switchboard

log = logging.getLogger("colibri.switchboard")

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
# Only lines naming one of these can be ours; the rest go to the SDK without being parsed twice.
_CALL, _CANCELLED, _INITIALIZE = b'"tools/call"', b'"notifications/cancelled"', b'"initialize"'
# A UTF-16 surrogate escape: the SDK answers a lone one with -32602, so such lines stay with it.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class ClientLane(Driver[LeanCall]):
    """Takes the routed tools/call requests of one stdio client off the SDK's path (a `pipes.Divert`)."""

    def __init__(
        self,
        board: Switchboard,
        server_info: dict[str, Any],
        limit_s: float,
        rounds: InputRounds | None = None,
    ) -> None:
        self._board = board
        # Shared with the SDK's lane, where a held call's later rounds arrive (program/serve.py).
        self._rounds = InputRounds(server_info["name"]) if rounds is None else rounds
        self._server_info = server_info
        self._limit_s = limit_s
        self._wire = Wire()
        self.send = self._wire.send
        self._running = False
        self._calls: dict[types.RequestId, LeanCall] = {}
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
                    self._abandon(call, "the switchboard is stopping")

    async def flush(self) -> None:
        await self._wire.flush()

    def attach(self, writer: LineWriter) -> None:
        self._wire.writer = writer

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
            message = jsonlines.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method, params = message.get("method"), message.get("params")
        if method == "initialize":
            self._initialized = True
            return False
        if not self._running or self._wire.writer is None or not isinstance(params, dict):
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
        if "requestState" in params or "inputResponses" in params:
            return False  # a later input round: the SDK's lane checks its state (rounds.py)
        call = LeanCall(request_id, name, arguments, meta.get("progressToken"), modern, params)
        call.span = spans.serving(name, meta, version)
        self._calls[request_id] = call
        with spans.current(call.span):  # what is sent on the call's behalf joins its trace
            self._start(call)
        return True

    def _cancel(self, request_id: object) -> bool:
        call = self._calls.get(request_id) if valid_id(request_id) else None
        if call is None:
            return False
        if call.held is not None:
            return True  # answered already (its first round): the later rounds are the SDK's
        call.cancelled = True  # the call is never answered, as JSON-RPC cancellation has it
        if call.task is not None:
            call.task.cancel()
        elif call.abandon is not None:
            self._abandon(call, "the client cancelled the call")
        return True

    def _abandon(self, call: LeanCall, reason: str) -> None:
        assert call.abandon is not None
        call.abandon(reason)
        self._forget(call)
        if call.route is not None:
            call.route.cancelled()

    def _caller(self, call: LeanCall) -> LeanCaller:
        if call.caller is None:
            ask = partial(self._ask, call) if call.modern else None
            call.caller = LeanCaller(self.send, self._board.default_caller, call.token, ask)
        return call.caller

    def _forget(self, call: LeanCall, error: str | None = None) -> None:
        spans.end(call.span, error)
        call.span = None
        self._calls.pop(call.request_id, None)
        if not self._calls and self._idle is not None:
            self._idle.set()

    def _finish(self, call: LeanCall, answer: Answer) -> None:
        self._forget(call, None if answer.error is None else str(answer.error.code))
        if call.held is not None:  # its rounds give the client the outcome (rounds.py)
            call.held.finish(outcome_of(answer))
        elif not call.cancelled:
            body = answer_body(answer, self._server_info if call.modern else None)
            self.send({"jsonrpc": "2.0", "id": call.request_id} | body)

    async def _ask(self, call: LeanCall, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        """A 2026-era call's downstream asks for input: the call is held and answered in rounds."""
        if call.held is None:
            call.held = self._rounds.hold(capabilities_of(call.params.get("_meta")))
            self._rounds.answer_first(call.held, call.params, partial(self._first_round, call))
        return await call.held.request(request, result_type)

    def _first_round(self, call: LeanCall, body: dict[str, Any]) -> None:
        if "result" in body:
            body = {"result": stamped(body["result"], self._server_info)}
        self.send({"jsonrpc": "2.0", "id": call.request_id} | body)
