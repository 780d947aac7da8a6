"""`colibri switchboard [run|status] --config FILE [--http HOST:PORT]`: read, validate, serve.

Exit codes: 0 success, 1 `status` found a downstream that is not HEALTHY, 2 bad config or usage.
Configuration is read here and nowhere else: the file, `--http`, `COLIBRI_LOG_LEVEL` and
`COLIBRI_MAX_MESSAGE_BYTES` and the `COLIBRI_HTTP_*` limits (switchboard/http_limits.py).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import anyio

from colibri.switchboard.config import SwitchboardConfig, load
from colibri.switchboard.downstream import CONNECT_TIMEOUT_S
from colibri.switchboard.errors import ConfigError

if TYPE_CHECKING:
    from colibri.switchboard.http_limits import HttpLimits

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_HOST = "127.0.0.1"


def run(action: str, config_path: str, http: str | None) -> int:
    """Entry point called by `colibri.cli`; returns the exit code."""
    from colibri.runtime.config import ConfigError as VariableError
    from colibri.runtime.config import LogLevel, max_message_bytes

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
    raw_level = os.environ.get("COLIBRI_LOG_LEVEL") or "info"
    try:
        level = LogLevel(raw_level.strip().lower())
    except ValueError:
        valid = ", ".join(member.value for member in LogLevel)
        return _usage(f"COLIBRI_LOG_LEVEL={raw_level!r} is not valid; use one of: {valid}")

    from colibri.switchboard.http_limits import HttpLimits

    try:
        limit = max_message_bytes(os.environ)
        http_limits = HttpLimits.from_env(os.environ)
    except (VariableError, ValueError) as exc:
        return _usage(str(exc))

    from colibri.runtime import logs

    logs.configure(level)
    if action == "status":
        return anyio.run(_status, config)
    anyio.run(_serve, config, address, limit, http_limits)
    return EXIT_OK


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `PORT` (loopback) → (host, port)."""
    host, colon, port_text = text.rpartition(":")
    host = host.strip("[]") if colon else DEFAULT_HOST
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(
            f"--http {text!r}: expected HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8765"
        )
    return host or DEFAULT_HOST, int(port_text)


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
