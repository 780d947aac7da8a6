"""`colibri switchboard [run|status] --config FILE [--http HOST:PORT]`: read, validate, serve.

Exit codes: 0 success, 1 `status` found a downstream that is not HEALTHY, 2 bad config or usage.
Configuration is read here and nowhere else: the file, `--http`, `COLIBRI_LOG_LEVEL` and
`COLIBRI_MAX_MESSAGE_BYTES` and the `COLIBRI_HTTP_*` limits (serving/http_limits.py).
"""

from __future__ import annotations

import os
import sys

import anyio

from colibri.core.env import ConfigError as EnvError
from colibri.core.env import max_message_bytes
from colibri.serving import logs
from colibri.serving.address import parse_address
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.serving.http_limits import HttpLimits
from colibri.switchboard.config import SwitchboardConfig, load
from colibri.switchboard.downstream import CONNECT_TIMEOUT_S
from colibri.switchboard.errors import ConfigError


def run(action: str, config_path: str, http: str | None) -> int:
    """Entry point called by `colibri.cli`; returns the exit code."""
    try:
        config = load(config_path)
    except ConfigError as exc:
        return _usage(f"{config_path}: {exc}")
    address = None
    if http is not None:
        try:
            address = parse_address(http)
        except ValueError as exc:
            return _usage(str(exc))
    try:
        level = logs.level_from_env()
        limit = max_message_bytes(os.environ)
        http_limits = HttpLimits.from_env(os.environ)
    except (EnvError, ValueError) as exc:
        return _usage(str(exc))
    logs.configure(level)
    if action == "status":
        return anyio.run(_status, config)
    anyio.run(_serve, config, address, limit, http_limits)
    return EXIT_OK


async def _serve(
    config: SwitchboardConfig, address: tuple[str, int] | None, limit: int, http_limits: HttpLimits
) -> None:
    from colibri.switchboard import server
    from colibri.switchboard.gateway import Switchboard

    board = Switchboard(config)
    if address is None:
        await server.serve_stdio(board, limit)
    else:
        await server.serve_http(board, *address, http_limits)


async def _status(config: SwitchboardConfig) -> int:
    """Connect to every downstream, let each have its first verdict, print the table."""
    from colibri.switchboard.gateway import Switchboard
    from colibri.switchboard.status import table

    board = Switchboard(config)
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        await board.settled(_settle_timeout(config))
        status = board.status()
        tasks.cancel_scope.cancel()
    print(table(status), flush=True)
    healthy = all(server["state"] == "HEALTHY" for server in status["servers"])
    return EXIT_OK if healthy else EXIT_FAILED


def _settle_timeout(config: SwitchboardConfig) -> float:
    """Long enough for a connection and one round of the three checks on every server."""
    slowest = max(
        max(CONNECT_TIMEOUT_S, spec.health.check_timeout_s) + 3 * spec.health.check_timeout_s
        for spec in config.servers
    )
    return slowest + 1.0


def _usage(message: str) -> int:
    print(f"colibri switchboard: {message}", file=sys.stderr)
    return EXIT_USAGE
