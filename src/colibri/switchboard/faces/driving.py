"""Driving one routed call of a lean lane (stdio's lean.py, HTTP's http_lane.py) along its `Route`.

A call is routed from the callback that read it and answered from the downstream's, with no task in
between: the route says what to do next, the `Driver` does it. A task serves a call only where
something must wait — the first verdicts, a downstream without a lean lane (the SDK client's call,
e.g. an HTTP downstream before it has one), or an observer that must finish before the call is sent
or the answer goes (an audit row that had to wait for the store). Each lane says where the call's
messages and answer go (`_caller`, `_finish`) and what it forgets of a call once answered
(`_forget`); everything between admission and answer is this module's, so both lanes route alike.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, Generic, TypeVar

from colibri.switchboard.base import DownstreamError, spans
from colibri.switchboard.faces.lean_caller import LeanCall, LeanCaller
from colibri.switchboard.routing import Answer, Attempt, Clearing, Route, Switchboard

log = logging.getLogger("colibri.switchboard")

CallT = TypeVar("CallT", bound=LeanCall)


class Driver(Generic[CallT]):
    """The route-driving part of a lean lane; a lane says where a call's answer goes."""

    _board: Switchboard

    def _caller(self, call: CallT) -> LeanCaller:
        raise NotImplementedError

    def _forget(self, call: CallT, error: str | None = None) -> None:
        raise NotImplementedError

    def _finish(self, call: CallT, answer: Answer) -> None:
        raise NotImplementedError

    async def flush(self) -> None:
        """What a task that answered a call does after: the stdio lane drains its pipe."""

    def _start(self, call: CallT) -> None:
        if self._board.waits_for_start(call.name):
            self._spawn(call, self._serve(call))
            return
        route = call.route = self._board.route(call.name, call.arguments, call.who)
        with self._guarded(call, route):
            self._go(call, route, route.start())

    def _go(self, call: CallT, route: Route, step: Attempt | Clearing | Answer) -> None:
        caller = self._caller(call)
        while not isinstance(step, Answer):
            if isinstance(step, Clearing):  # an observer must finish before it is sent: a task waits
                self._spawn(call, self._serve(call, step))
                return
            attempt, tool = step, step.target.tool
            done = partial(self._answered, call, route, attempt)
            try:
                abandon = attempt.downstream.send_raw(
                    attempt.ticket,
                    tool,
                    call.arguments,
                    caller,
                    progress=caller.tell,
                    done=done,
                    vouch=route.statements,
                )
            except DownstreamError as exc:
                step = route.failed(attempt, exc)
                continue
            if abandon is None:  # no lean lane there: a task awaits the answer
                self._spawn(call, self._serve(call, attempt))
            call.abandon = abandon
            return
        self._answer(call, route, step)

    def _answered(
        self, call: CallT, route: Route, attempt: Attempt, outcome: dict[str, Any] | DownstreamError
    ) -> None:
        call.abandon = None
        with self._guarded(call, route), spans.current(call.span):
            if isinstance(outcome, DownstreamError):
                self._go(call, route, route.failed(attempt, outcome))
            else:
                self._answer(call, route, route.answered(attempt, outcome))

    @contextmanager
    def _guarded(self, call: CallT, route: Route) -> Iterator[None]:
        """What goes wrong routing `call` is its answer: HANDLER_ERROR, as on the SDK's lane."""
        try:
            yield
        except Exception as exc:
            log.exception("switchboard failed routing %s", call.name)
            self._answer(call, route, route.crashed(exc))

    def _answer(self, call: CallT, route: Route, answer: Answer) -> None:
        try:
            waiting = route.before_answer(answer)
        except Exception as exc:
            log.exception("an observer failed before the answer to %s", call.name)
            answer, waiting = route.crashed(exc), None
        if waiting is not None:  # an observer must finish first: only then does the answer go
            self._spawn(call, self._answer_after(call, route, answer, waiting))
            return
        self._finish(call, answer)
        route.after_answer(answer)  # metrics, once the answer is on its way

    async def _answer_after(
        self, call: CallT, route: Route, answer: Answer, waiting: Awaitable[None]
    ) -> None:
        try:
            await waiting
        except asyncio.CancelledError:
            self._forget(call)
            route.cancelled()
            if call.cancelled:
                return
            raise
        except Exception as exc:
            log.exception("an observer failed before the answer to %s", call.name)
            answer = route.crashed(exc)
        self._finish(call, answer)
        route.after_answer(answer)
        await self.flush()

    def _spawn(self, call: CallT, serving: Coroutine[Any, Any, None]) -> None:
        # A bare task: the lane cancels what is left when it stops or the call is cancelled.
        call.task = asyncio.get_running_loop().create_task(serving)

    async def _serve(self, call: CallT, step: Attempt | Clearing | None = None) -> None:
        """The call, driven by awaiting: after the first verdicts, or on a downstream with no lean lane."""
        try:
            if call.route is None:  # sent before its servers' first verdicts: wait for them (bounded)
                await self._board.started()
                call.route = self._board.route(call.name, call.arguments, call.who)
            route = call.route
            answer = await route.run(self._caller(call), raw=True, step=step)
        except asyncio.CancelledError:
            self._forget(call)
            if call.cancelled:
                return
            raise
        self._finish(call, answer)
        route.after_answer(answer)
        await self.flush()
