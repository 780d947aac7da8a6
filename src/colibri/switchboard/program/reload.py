"""Hot reload (SPEC §12): SIGHUP, or a change of the file with `--watch`, applies the new config.

The file is read and validated first; an invalid file is refused with its reason logged and the
running config stays. A valid one is handed to `Switchboard.apply`, which changes only what differs
(policies, rate limits and the pins mode included); the audit store stays the one the switchboard
started with, and a changed audit section says so.

A policy glob or `per_tool` key that matches nothing is one warning line, at start and on each
reload (`warn_unmatched`); one whose server exists but that matches none of the tools it lists is
one line once that server has first listed them (`Unlisted`, an observer of the board).
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Mapping
from pathlib import Path

import anyio
import mcp_types as types

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import SwitchboardConfig, load, unmatched, unmatched_rules
from colibri.switchboard.routing import Observer, Switchboard

log = logging.getLogger("colibri.switchboard")

WATCH_INTERVAL_S = 0.5


async def watch(board: Switchboard, path: str, poll: bool) -> None:
    """Reload on SIGHUP, and on every change of the file when `poll` is set; runs until cancelled."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_on_hangup, board, path)
        if poll:
            tasks.start_soon(_on_change, board, path)


async def reload_from(board: Switchboard, path: str) -> bool:
    """Read `path` and apply it; False (with the reason logged) when the file is refused."""
    try:
        config = load(path)
    except ConfigError as exc:
        log.error("reload refused, the running config stays: %s: %s", path, exc)
        return False
    warn_unmatched(config)
    if config.audit != board.config.audit:
        # The store is opened (and its key checked) before anything is served; it is not swapped live.
        log.warning(
            "the audit section changed; calls are still recorded in %s until the switchboard restarts",
            board.config.audit or "no audit store",
        )
    await board.apply(config)
    return True


async def _on_hangup(board: Switchboard, path: str) -> None:
    with anyio.open_signal_receiver(signal.SIGHUP) as signals:
        async for _ in signals:
            log.info("received SIGHUP: reloading %s", path)
            await reload_from(board, path)


async def _on_change(board: Switchboard, path: str) -> None:
    last = _stamp(path)
    while True:
        await anyio.sleep(WATCH_INTERVAL_S)
        stamp = _stamp(path)
        if stamp != last:
            last = stamp
            log.info("%s changed: reloading", path)
            await reload_from(board, path)


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def warn_unmatched(config: SwitchboardConfig) -> None:
    """One warning line per policy glob or per_tool key of a loaded config that matches nothing."""
    servers = [spec.name for spec in config.servers]
    for line in unmatched(servers, config.fallbacks, config.policies, config.rate_limits):
        log.warning("%s", line)
    for line in unmatched_rules(config.approvals, servers, {}):  # SPEC §22: its server may come later
        log.warning("%s", line)


class Unlisted(Observer):
    """Warns of each policy glob and `per_tool` key whose servers exist but list no tool it matches
    (`open.serach`, a typo the load could not see), once each server has first listed its tools
    (SPEC §21); again after a reload, as the load's own warnings are."""

    def __init__(self, config: SwitchboardConfig) -> None:
        self._config = config
        self._listed: dict[str, tuple[str, ...]] = {}  # each server's first listing
        self._warned: set[str] = set()

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        # Called at every change of state too: only the first list that names a tool is judged.
        if server in self._listed or not tools:
            return
        self._listed[server] = tuple(tools)
        self._warn()

    def left(self, server: str) -> None:
        self._listed.pop(server, None)  # removed, or restarted by a reload: it will list again

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._config, self._warned = config, set()
        self._warn()

    def _warn(self) -> None:
        config = self._config
        servers = [spec.name for spec in config.servers]
        lines = unmatched(servers, config.fallbacks, config.policies, config.rate_limits, self._listed)
        for line in lines + unmatched_rules(config.approvals, servers, self._listed):
            if line not in self._warned:
                self._warned.add(line)
                log.warning("%s", line)
