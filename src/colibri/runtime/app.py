"""The application: configuration, live state, the chain and the boot that readies them.

An `App` starts light (SPEC §25's cold start): what tools/list and `initialize` say comes from the
kept declarations (`tools/snapshot.py`), and the chain, the catalogue, the handlers and the models
are imported by phase 2's thread (`boot.load`) once the transport is up. A call waits for them
(`loaded`: the system tools) or for the whole of phase 2 (`ready`: every other tool), bounded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from colibri import __version__
from colibri.core.callers import LOCAL, Caller
from colibri.core.state import ServerState
from colibri.runtime.config import Config
from colibri.tools import snapshot
from colibri.tools.snapshot import Declared

if TYPE_CHECKING:
    from colibri.chain.pipeline import Chain, Reply
    from colibri.core.spec import Tool
    from colibri.storage import Migration

log = logging.getLogger("colibri")

PHASE2_WAIT_S = 5.0
RECONNECT_POLL_S = 0.1  # how often a lost connection is looked at; its backoff decides the tries


class NotLoaded(Exception):
    """Phase 2 has not imported the tools (still under way past the wait, or it failed)."""


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
        self._given = None if tools is None else list(tools)  # None: the catalogue's, loaded in phase 2
        declared = snapshot.declared() if tools is None else [Declared.of(tool) for tool in tools]
        self.declared = {tool.name: tool for tool in declared}
        self.migrations = migrations  # None: the catalogue's, for the backend that opens
        self._chain: Chain | None = None
        self._load_error: str | None = None
        self.loaded = anyio.Event()  # the chain is built (or phase 2 failed to build it)
        self.ready = anyio.Event()  # phase 2 is over, whatever its outcome

    @property
    def chain(self) -> Chain:
        if self._chain is None:
            raise NotLoaded(self._not_loaded())
        return self._chain

    async def boot(self) -> None:
        """Phase 2; whatever happens, waiting requests are released afterwards."""
        try:
            # Finished even when the transport ends first (`colibri serve </dev/null` reaches
            # EOF at once and cancels the duties): cut short, phase 2 would hide a refusal it
            # exists to make (a signing key that may not sign this log exits 2) and leave no
            # signer for the shutdown checkpoint. A stop signal still ends the process at once.
            with anyio.CancelScope(shield=True):
                await self._boot()
        finally:
            self.loaded.set()
            self.ready.set()

    async def _boot(self) -> None:
        try:
            # Phase 2's thread: the imports are most of what a start costs beyond the SDK's, and
            # nothing that answers initialize or tools/list needs them. Started with the transport,
            # not before the SDK is imported: imports hold the GIL, so beside the main thread's
            # they would only have delayed the first answer by their own CPU time.
            tools = await anyio.to_thread.run_sync(self._load)
        except (ImportError, OSError, ValueError) as exc:
            self._load_error = f"{type(exc).__name__}: {exc}"
            self.state.boot_error = f"cannot load the tools: {self._load_error}"
            log.error("boot failed, serving nothing (the tools could not be loaded): %s", self._load_error)
            return
        from colibri.runtime import boot  # imported by the thread just now: a lookup

        self._chain = boot.chain_for(tools, self.state, self.config)
        self.loaded.set()
        await boot.run_phase2(self.state, self.config, self.migrations)

    def _load(self) -> dict[str, Tool]:
        from colibri.runtime import boot  # the chain, the storage and the catalogue come with it

        return boot.load(self._given)

    async def wait_loaded(self) -> None:
        """Until the chain is built (bounded): the system tools need nothing more (SPEC §1.3)."""
        await self._wait(self.loaded)

    async def wait_ready(self) -> None:
        await self._wait(self.ready)

    @staticmethod
    async def _wait(event: anyio.Event) -> None:
        if event.is_set():  # every call after boot: no cancel scope, no trip round the loop
            return
        with anyio.move_on_after(PHASE2_WAIT_S):
            await event.wait()

    def admitted(self) -> list[Declared]:
        """What tools/list offers: the mode health reports (the declared one while phase 2 runs,
        MINIMAL after a failed boot), from the declarations alone."""
        mode = self.state.reported_mode
        return [tool for tool in self.declared.values() if tool.admitted_in(mode)]

    async def call(self, tool_name: str, arguments: object, caller: Caller = LOCAL) -> Reply:
        """Run one call through the chain; `NotLoaded` when phase 2 has not built it in time."""
        await self.wait_loaded()
        return await self.chain.run(tool_name, arguments, caller)

    async def drain(self) -> None:
        """On a stop signal: let the call in flight finish, then close the database."""
        await self.close_between_calls()
        # Give the transport a moment to write the last response out.
        await anyio.sleep(0.05)

    async def close_between_calls(self) -> None:
        """Close once the call in flight (if any) has left the chain."""
        if self._chain is None:
            self.close()
            return
        async with self._chain.lock:
            self.close()

    def readiness(self) -> str | None:
        """None when every admitted tool can run (phase 2, not MINIMAL); else why not."""
        state = self.state
        if self._load_error is not None:
            return self._not_loaded()
        if state.boot_error is not None:
            return f"boot failed, serving MINIMAL (server_ping, server_health only): {state.boot_error}"
        if state.phase == "phase1":
            return "starting: phase 2 (opening and migrating the database) is still running"
        if state.mode.value == "MINIMAL":
            return "mode MINIMAL: only server_ping and server_health are served"
        if state.db is not None:
            return state.db.unavailable()
        return None

    def _not_loaded(self) -> str:
        if self._load_error is not None:
            return f"boot failed: the tools could not be loaded ({self._load_error}); see the server's stderr"
        return "starting: phase 2 is still loading the tools; ask again in a moment"

    async def keep_connected(self) -> None:
        """For the life of the server: get a lost database connection back (PostgreSQL), with the
        store's own backoff, under the chain's lock (the connection is the one calls use)."""
        await self.ready.wait()
        from colibri.chain.worker import in_worker  # loaded by phase 2 by now

        while True:
            await anyio.sleep(RECONNECT_POLL_S)
            db = self.state.db
            if db is not None and db.unavailable() is not None:
                async with self.chain.lock:
                    if await in_worker(db.reconnect):
                        log.warning("the database connection is back")

    async def write_later_rows(self) -> None:
        """The chain's duty of writing the audit rows of calls answered inline (SPEC §14)."""
        await self.loaded.wait()
        if self._chain is not None:
            await self._chain.write_later_rows()

    async def checkpoint_every(self) -> None:
        """Every COLIBRI_CHECKPOINT_INTERVAL_S, a checkpoint if the log grew (runtime/checkpoints.py)."""
        await self.ready.wait()
        if self._chain is None:  # phase 2 could not load the tools: nothing is written to sign
            return
        from colibri.runtime.checkpoints import checkpoint_every  # loaded by phase 2 by now

        await checkpoint_every(self)

    def close(self) -> None:
        if self._chain is not None:
            self._chain.close()
        db, self.state.db = self.state.db, None
        if db is not None:
            from colibri.runtime.checkpoints import checkpoint_at_shutdown  # an open db: loaded

            checkpoint_at_shutdown(db, self.state.notary)
            db.close()
