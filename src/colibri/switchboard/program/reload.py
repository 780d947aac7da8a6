"""Hot reload (SPEC §12): SIGHUP, or a change of the file with `--watch`, applies the new config.

The file is read and validated first; an invalid file is refused with its reason logged and the
running config stays. A valid one is handed to `Switchboard.apply`, which changes only what differs
(policies, rate limits and the pins mode included); the audit store stays the one the switchboard
started with, and a changed audit section says so.
"""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import anyio

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import SwitchboardConfig, load, unmatched
from colibri.switchboard.routing import Switchboard

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
