"""One 2026-era client's call held between its input rounds (rounds.py tells the whole story).

`Held` is the `Caller` of the downstream call: a request the downstream makes (sampling, elicitation,
roots) becomes an open input request, answered when the client's next round brings its response;
progress and log lines go to the client request of the round in flight, if any.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST
from pydantic import ValidationError

from colibri.switchboard.base import Caller, ResultT

# The capability a client must declare before it is sent each kind of input request (spec MUST).
NEEDS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}

Outcome = types.CallToolResult | types.ErrorData


class _Ask:
    __slots__ = ("answer", "request", "result_type")

    def __init__(self, request: types.ServerRequest, result_type: type[types.Result]) -> None:
        self.request = request
        self.result_type = result_type
        self.answer: asyncio.Future[types.Result] = asyncio.get_running_loop().create_future()


class Held:
    """A call whose downstream asked for input: its open requests, its rounds and, at the end, its outcome."""

    def __init__(self, capabilities: dict[str, Any], current: Caller | None) -> None:
        self.id = secrets.token_urlsafe(18)
        self.round = 0
        self.current = current  # the client request of the round in flight, if one is
        self._capabilities = capabilities
        self._asks: dict[str, _Ask] = {}
        self._keys = itertools.count(1)
        self._outcome: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._news = asyncio.Event()

    # --- the downstream call's side: the Caller ------------------------------------------------

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.current is not None:
            await self.current.progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.current is not None:
            await self.current.log(params)

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT:
        needed = NEEDS.get(request.method)
        if needed is None or self._capabilities.get(needed) is None:
            raise MCPError(
                INVALID_REQUEST,
                f"the client did not declare the {needed or request.method} capability, so it cannot "
                f"be asked {request.method}",
            )
        key = f"{needed}-{next(self._keys)}"
        ask = self._asks[key] = _Ask(request, result_type)
        self._news.set()
        try:
            answer = await ask.answer
        finally:
            self._asks.pop(key, None)
        assert isinstance(answer, result_type)
        return answer

    def finish(self, outcome: Outcome) -> None:
        """The downstream call is over: `outcome` is the answer to the client's current or next round."""
        if not self._outcome.done():
            self._outcome.set_result(outcome)
            self._news.set()

    # --- the client's side: the rounds ---------------------------------------------------------

    @property
    def over(self) -> bool:
        return self._outcome.done()

    def answer(self, responses: dict[str, types.InputResponse] | None) -> None:
        """The client's responses go to the open requests they name; other keys are ignored (spec).

        Every response is checked first: a response of the wrong kind is -32602 and answers nothing.
        """
        checked: list[tuple[_Ask, types.Result]] = []
        for key, response in (responses or {}).items():
            ask = self._asks.get(key)
            if ask is None or ask.answer.done():
                continue
            try:
                dumped = response.model_dump(by_alias=True, mode="json", exclude_none=True)
                checked.append((ask, ask.result_type.model_validate(dumped)))
            except ValidationError as exc:
                raise MCPError(
                    INVALID_PARAMS,
                    f"inputResponses[{key!r}] does not answer {ask.request.method}: expected a "
                    f"{ask.result_type.__name__} ({exc.error_count()} problem(s), the first: "
                    f"{exc.errors()[0]['msg']})",
                ) from None
        for ask, result in checked:
            ask.answer.set_result(result)

    async def next_round(self) -> types.CallToolResult | types.InputRequiredResult:
        """The final result once the call is over; else, once the downstream waits on the client, its
        open requests (an unanswered one is asked again) under this call's next `requestState`."""
        while True:
            if self._outcome.done():
                outcome = self._outcome.result()
                if isinstance(outcome, types.ErrorData):
                    raise MCPError.from_error_data(outcome)
                return outcome
            waiting = {key: ask.request for key, ask in self._asks.items() if not ask.answer.done()}
            if waiting:
                # Requests the downstream makes together go out together.
                for _ in range(3):
                    await asyncio.sleep(0)
                waiting = {key: ask.request for key, ask in self._asks.items() if not ask.answer.done()}
                if self._outcome.done() or not waiting:
                    continue
                self.round += 1
                return types.InputRequiredResult(
                    input_requests=waiting,
                    request_state=f"{self.id}.{self.round}",
                )
            self._news.clear()
            await self._news.wait()

    def give_up(self, reason: str) -> None:
        """The client will not come back: the downstream's open requests are refused with `reason`."""
        for ask in self._asks.values():
            if not ask.answer.done():
                ask.answer.set_exception(MCPError(INVALID_REQUEST, reason))
