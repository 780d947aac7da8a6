"""The application: configuration, live state, the chain and the boot that readies them."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import anyio.to_thread

from colibri import __version__
from colibri.chain.pipeline import Chain, Reply
from colibri.chain.worker import in_worker
from colibri.core.callers import LOCAL, Caller
from colibri.core.spec import Tool
from colibri.core.state import ServerState
from colibri.runtime.boot import run_phase2
from colibri.runtime.checkpoints import checkpoint_at_shutdown
from colibri.runtime.config import Config
from colibri.storage import Migration
from colibri.tools import catalog

log = logging.getLogger("colibri")

PHASE2_WAIT_S = 5.0
RECONNECT_POLL_S = 0.1  # how often a lost connection is looked at; its backoff decides the tries


class App:
    """One server's worth of Colibri, independent of the transport that carries it."""

    def __init__(
        self,
        config: Config,
        tools: Sequence[Tool] | None = None,
        migrations: Sequence[Migration] | None = None,
    ) -> None:
        self.config = config
        self.state = ServerState(
            version=__version__, declared_mode=config.mode, skills_dirs=config.skills_dirs
        )
        self.tools = {tool.name: tool for tool in (catalog.TOOLS if tools is None else tools)}
        self.migrations = migrations  # None: the catalogue's, for the backend that opens
        self.chain = Chain(self.tools, self.state, config.log_origin)
        self.ready = anyio.Event()

    async def boot(self) -> None:
        """Phase 2; whatever happens, waiting requests are released afterwards."""
        try:
            async with anyio.create_task_group() as tasks:
                # The tools' JSON schemas (what tools/list sends) are made meanwhile, in a thread of
                # their own: phase 2 mostly waits on the disk, and the first tools/list waits for it.
                tasks.start_soon(anyio.to_thread.run_sync, self._make_schemas)
                # Finished even when the transport ends first (`colibri serve </dev/null` reaches
                # EOF at once and cancels the duties): cut short, phase 2 would hide a refusal it
                # exists to make (a signing key that may not sign this log exits 2) and leave no
                # signer for the shutdown checkpoint. A stop signal still ends the process at once.
                with anyio.CancelScope(shield=True):
                    await run_phase2(self.state, self.config, self.migrations)
        finally:
            self.ready.set()

    def _make_schemas(self) -> None:
        for tool in self.tools.values():
            tool.input_schema  # noqa: B018 - cached on first use: this is the first use
            tool.output_schema  # noqa: B018

    async def wait_ready(self) -> None:
        if self.ready.is_set():  # every call after boot: no cancel scope, no trip round the loop
            return
        with anyio.move_on_after(PHASE2_WAIT_S):
            await self.ready.wait()

    def admitted(self) -> list[Tool]:
        return [tool for tool in self.tools.values() if tool.admitted_in(self.state.mode)]

    async def call(self, tool_name: str, arguments: object, caller: Caller = LOCAL) -> Reply:
        return await self.chain.run(tool_name, arguments, caller)

    async def drain(self) -> None:
        """On a stop signal: let the call in flight finish, then close the database."""
        async with self.chain.lock:
            self.close()
            # Give the transport a moment to write the last response out.
            await anyio.sleep(0.05)

    def readiness(self) -> str | None:
        """None when every admitted tool can run (phase 2, not MINIMAL); else why not."""
        state = self.state
        if state.boot_error is not None:
            return f"boot failed, serving MINIMAL (server_ping, server_health only): {state.boot_error}"
        if state.phase == "phase1":
            return "starting: phase 2 (opening and migrating the database) is still running"
        if state.mode.value == "MINIMAL":
            return "mode MINIMAL: only server_ping and server_health are served"
        if state.db is not None:
            return state.db.unavailable()
        return None

    async def keep_connected(self) -> None:
        """For the life of the server: get a lost database connection back (PostgreSQL), with the
        store's own backoff, under the chain's lock (the connection is the one calls use)."""
        while True:
            await anyio.sleep(RECONNECT_POLL_S)
            db = self.state.db
            if db is not None and db.unavailable() is not None:
                async with self.chain.lock:
                    if await in_worker(db.reconnect):
                        log.warning("the database connection is back")

    def close(self) -> None:
        self.chain.close()
        db, self.state.db = self.state.db, None
        if db is not None:
            checkpoint_at_shutdown(db, self.state.notary)
            db.close()
