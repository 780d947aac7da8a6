"""Input requests for 2026-era clients (MCP 2026-07-28 multi round-trip requests, SEP-2322).

A downstream may ask its client for a sampling, an elicitation or its roots in the middle of a call.
A handshake-era client is asked on its own connection (peers.SessionCaller). A 2026-era client has
no connection to be asked on: its `tools/call` is answered `input_required` with the downstream's
open requests, while the downstream call goes on, held here (`Held`); the client calls again with
its responses and the `requestState` it got, the responses go to the waiting downstream requests,
and the next answer is whichever comes first: the final result, or the downstream's next requests.
Both lanes hold calls here: the SDK's (`call`, `resume`) and the lean lane's (`hold`, `lean_round`).

The SDK's own `RequestStateBoundary` (the `boundary` middleware) seals every `requestState` it
sends (AES-256-GCM, bound to the method, the tool and its arguments, the principal, with a TTL) and
refuses any it did not mint with -32602 before a handler sees it. The plaintext names the held call
and its round: a state for a round that is over (a replay), for a call no longer held (expired, or
its result already collected) or for a round already in flight is refused with the same error, and
nothing reaches the downstream. A held call waits `wait_s` for the client's next round; then the
downstream's open requests are refused and the call is forgotten.

Held calls live in this process: behind a load balancer, a client's rounds must reach the same
switchboard (the downstream's request is open on its connection), as handshake-era sessions must.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from functools import partial
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, INTERNAL_ERROR, INVALID_PARAMS

from colibri.switchboard.base import Caller
from colibri.switchboard.faces.held import Held, Outcome

log = logging.getLogger("colibri.switchboard")

INPUT_WAIT_S = 600.0

Run = Callable[[Caller], Coroutine[Any, Any, types.CallToolResult]]


def capabilities_of(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The client capabilities a 2026-era request declares in its `_meta`."""
    declared = (meta or {}).get(CLIENT_CAPABILITIES_META_KEY)
    return declared if isinstance(declared, dict) else {}


def expired_state() -> MCPError:
    """The error the SDK's boundary gives a state it refuses, for one that names no open round."""
    return MCPError(
        code=INVALID_PARAMS,
        message="Invalid or expired requestState",
        data={"reason": "invalid_request_state"},
    )


class InputRounds:
    """The calls held between their input rounds, by id; the boundary that seals their states."""

    def __init__(self, server_name: str, wait_s: float = INPUT_WAIT_S) -> None:
        self.boundary = RequestStateBoundary(
            RequestStateSecurity.ephemeral(ttl=wait_s), default_audience=server_name
        )
        self._wait_s = wait_s
        self._held: dict[str, Held] = {}
        self._expiry: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[types.CallToolResult]] = set()
        self._writers: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._held)

    async def call(
        self, run: Run, capabilities: dict[str, Any], current: Caller
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The first round of a call on the SDK's lane: its result, or its first input requests."""
        held = Held(capabilities, current)
        task = asyncio.get_running_loop().create_task(run(held))
        self._tasks.add(task)
        task.add_done_callback(partial(self._ran, held))
        try:
            step = await held.next_round()
        except asyncio.CancelledError:
            task.cancel()  # the client went away before the first round ended: so does the call
            raise
        finally:
            held.current = None
        if isinstance(step, types.InputRequiredResult):
            self._keep(held)
        return step

    def hold(self, capabilities: dict[str, Any]) -> Held:
        """A held call for the lean lane, which runs the call itself and calls `finish` at its end."""
        return Held(capabilities, None)

    def answer_first(
        self, held: Held, params: dict[str, Any], write: Callable[[dict[str, Any]], None]
    ) -> None:
        """Write the first round of a call the lean lane holds, once there is one (`lean_round`)."""

        async def first() -> None:
            write(await self.lean_round(held, params))

        task = asyncio.get_running_loop().create_task(first())
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)

    async def lean_round(self, held: Held, params: dict[str, Any]) -> dict[str, Any]:
        """The first round of a call the lean lane holds, sealed as on the SDK's lane: `{"result"}`
        or `{"error"}`. `params` are the call's own (the state is bound to its name and arguments)."""
        try:
            step = await held.next_round()
        except MCPError as exc:
            return {"error": exc.error.model_dump(by_alias=True, mode="json", exclude_none=True)}
        result: dict[str, Any] = step.model_dump(by_alias=True, mode="json", exclude_none=True)
        if isinstance(step, types.InputRequiredResult):
            self._keep(held)
            context: ServerRequestContext[Any, Any] = ServerRequestContext(
                session=None,  # type: ignore[arg-type]  # the boundary reads the method and params only
                lifespan_context={},
                protocol_version="2026-07-28",
                method="tools/call",
                params=params,
            )

            async def unchanged(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
                return result

            sealed = await self.boundary(context, unchanged)
            assert isinstance(sealed, dict)
            result = sealed
        return {"result": result}

    async def resume(
        self, state: str, responses: dict[str, types.InputResponse] | None, current: Caller
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A round after the first: `state` is the boundary's plaintext, the call's id and round."""
        held_id, _, number = state.rpartition(".")
        held = self._held.get(held_id)
        if held is None or str(held.round) != number or held.current is not None:
            raise expired_state()
        self._expiry.pop(held_id).cancel()
        held.current = current
        try:
            held.answer(responses)
            step = await held.next_round()
        except MCPError:
            self._keep(held)  # a response of the wrong kind: the same round may be answered again
            raise
        except asyncio.CancelledError:
            self._drop(held, "the client cancelled the call")
            raise
        finally:
            held.current = None
        if isinstance(step, types.InputRequiredResult):
            self._keep(held)
        else:
            self._held.pop(held_id, None)
        return step

    def _keep(self, held: Held) -> None:
        self._held[held.id] = held
        loop = asyncio.get_running_loop()
        self._expiry[held.id] = loop.call_later(self._wait_s, self._drop, held, "no answer in time")

    def _drop(self, held: Held, why: str) -> None:
        self._held.pop(held.id, None)
        timer = self._expiry.pop(held.id, None)
        if timer is not None:
            timer.cancel()
        held.give_up(f"the client's input never came: {why}")

    def _ran(self, held: Held, task: asyncio.Task[types.CallToolResult]) -> None:
        self._tasks.discard(task)
        outcome: Outcome
        if task.cancelled():
            outcome = types.ErrorData(code=INTERNAL_ERROR, message="the call was cancelled")
        elif (failure := task.exception()) is not None:
            outcome = (
                failure.error
                if isinstance(failure, MCPError)
                else types.ErrorData(code=INTERNAL_ERROR, message=f"the call failed: {failure}")
            )
        else:
            outcome = task.result()
        held.finish(outcome)

    def close(self) -> None:
        """The switchboard is stopping: every held call is given up."""
        for held in list(self._held.values()):
            self._drop(held, "the switchboard is stopping")
        for task in [*self._tasks, *self._writers]:
            task.cancel()
