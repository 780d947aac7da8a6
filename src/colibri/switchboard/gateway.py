"""The switchboard: every supervised downstream, the router in front of them, and change news.

Independent of the transport that serves it upstream (see `server.py`); the clock and the
downstream connector are injected.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types

from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.router import Router
from colibri.switchboard.states import Clock, State
from colibri.switchboard.status import snapshot
from colibri.switchboard.transport import Connector, open_session

log = logging.getLogger("colibri.switchboard")

ToolsChanged = Callable[[], Awaitable[None]]


class Switchboard:
    """Runs the downstreams and answers tools/list and tools/call for the MCP adapter."""

    def __init__(
        self, config: SwitchboardConfig, connector: Connector = open_session, clock: Clock = time.monotonic
    ) -> None:
        self.config = config
        self.downstreams = {spec.name: Downstream(spec, connector, clock) for spec in config.servers}
        self.router = Router(self.downstreams, config.fallbacks, self.status)
        self._changed = anyio.Event()
        self._started = anyio.Event()
        self._subscribers: list[ToolsChanged] = []
        self._published = self._signature()
        for downstream in self.downstreams.values():
            downstream.on_change(self._mark_changed)

    def on_tools_changed(self, subscriber: ToolsChanged) -> None:
        """Await `subscriber()` whenever the listed tools change."""
        self._subscribers.append(subscriber)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Supervise every downstream until cancelled."""
        async with anyio.create_task_group() as tasks:
            for downstream in self.downstreams.values():
                tasks.start_soon(downstream.run, name=f"downstream {downstream.name}")
            tasks.start_soon(self._publish_changes)
            tasks.start_soon(self._start_up)
            task_status.started()

    async def started(self) -> None:
        """Return once every downstream has had its first verdict, or `startup_wait_s` has passed.

        A client that lists tools once at start-up (the Inspector CLI, many IDEs) would otherwise see
        only switchboard_status; after start-up this returns at once."""
        with anyio.move_on_after(self.config.startup_wait_s):
            await self._started.wait()

    async def _start_up(self) -> None:
        await self.settled(self.config.startup_wait_s)
        self._started.set()

    async def settled(self, timeout: float) -> None:
        """Wait (at most `timeout`) until every downstream has had its first verdict."""
        with anyio.move_on_after(timeout):
            for downstream in self.downstreams.values():
                await downstream.settled.wait()

    def tools(self) -> list[types.Tool]:
        return self.router.tools()

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        if not self._started.is_set() and any(
            self.downstreams[server].machine.state is State.STARTING
            for server in self.router.servers_for(name)
        ):
            # Sent right after connecting, before its server's first verdict: wait for that verdict
            # (bounded, as tools/list does) rather than refuse a server that is merely starting.
            await self.started()
        return await self.router.call(name, arguments)

    def status(self) -> dict[str, Any]:
        return snapshot(self.downstreams.values(), self.config.fallbacks)

    def _mark_changed(self) -> None:
        self._changed.set()

    async def _publish_changes(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            signature = self._signature()
            if signature == self._published:
                continue
            self._published = signature
            log.info("tools changed: %d listed", len(signature))
            for subscriber in self._subscribers:
                try:
                    await subscriber()
                except Exception:
                    # News that cannot be delivered must not stop the routing it is about.
                    log.exception("could not announce the changed tool list")

    def _signature(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            (tool.name, json.dumps(tool.input_schema, sort_keys=True, default=str)) for tool in self.tools()
        )
