"""`colibri switchboard [run|status] --config FILE [--http HOST:PORT]`: read, validate, serve.

Exit codes: 0 success, 1 `status` found a downstream that is not HEALTHY, 2 bad config or usage
(an address that cannot be listened on and a tokens file others may write included: one line).
Configuration is read here and nowhere else: the file, `--http`, `COLIBRI_LOG_LEVEL` and
`COLIBRI_MAX_MESSAGE_BYTES` and the `COLIBRI_HTTP_*` limits (serving/http_limits.py).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from colibri.core.env import ConfigError as EnvError
from colibri.core.env import max_message_bytes
from colibri.serving import logs, tracing
from colibri.serving.address import parse_address
from colibri.serving.errors import UnsafeFile, served
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.serving.hosts import is_loopback
from colibri.serving.http import run_program
from colibri.serving.http_limits import HttpLimits
from colibri.serving.secret_files import refuse_if_others_may_write
from colibri.switchboard.audit import AuditStore, AuditStoreError, StoreOptions, open_store
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import SwitchboardConfig, load
from colibri.switchboard.downstream import CONNECT_TIMEOUT_S
from colibri.switchboard.faces import Serving, TokensFile
from colibri.switchboard.program.reload import warn_unmatched
from colibri.switchboard.program.serve import board_for, serve_http, serve_stdio
from colibri.switchboard.program.status_table import table


def run(
    action: str,
    config_path: str,
    http: str | None,
    *,
    no_auth: bool = False,
    metrics: str | None = None,
    watch: bool = False,
) -> int:
    """Entry point called by `colibri.cli`; returns the exit code."""
    try:
        config = load(config_path)
    except ConfigError as exc:
        return _usage(f"{config_path}: {exc}")
    warn_unmatched(config)
    address = metrics_address = None
    try:
        if http is not None:
            address = parse_address(http)
        if metrics is not None:
            metrics_address = parse_address(metrics, "--metrics")
    except ValueError as exc:
        return _usage(str(exc))
    if address is not None:
        refusal = _auth_refusal(address[0], config, no_auth)
        if refusal is not None:
            return _usage(refusal)
    try:
        level = logs.level_from_env()
        tracing.check()
        limit = max_message_bytes(os.environ)
        http_limits = HttpLimits.from_env(os.environ)
    except (EnvError, ValueError) as exc:
        return _usage(str(exc))
    if action == "status":
        with _downstreams_stderr_dropped():
            # The table is the answer: only warnings beside it, never the checks' INFO lines.
            logs.configure(logs.LogLevel.ERROR if level is logs.LogLevel.ERROR else logs.LogLevel.WARN)
            return anyio.run(_status, config)
    logs.configure(level)
    options = Serving(
        config_path=config_path,
        http=address,
        metrics=metrics_address,
        tokens=None if no_auth or config.tokens_file is None else config.tokens_file,
        oauth=None if no_auth else config.oauth,
        watch=watch,
        message_limit=limit,
        http_limits=http_limits,
    )
    if options.tokens is not None and address is not None:
        try:
            refuse_if_others_may_write(Path(options.tokens))
        except UnsafeFile as exc:
            return _usage(str(exc))
    if options.tokens is not None:
        tokens_file = TokensFile(options.tokens)
        tokens_file.entries()
        if tokens_file.refused:  # a token named local or switchboard would pass for the gateway's own
            return _usage(f"{tokens_file.refused[0]}; remove or rename that line")
    store = None
    if config.audit is not None:
        try:
            store = open_store(config.audit, StoreOptions.from_env(os.environ))
        except (EnvError, AuditStoreError) as exc:
            return _usage(str(exc))

    def serve() -> None:
        with tracing.traced("colibri-switchboard"):
            if options.http is None:
                anyio.run(_serve, config, options, store)
            else:  # on the event loop of the HTTP stack `serve --http` runs on (serving/http.py chooses)
                run_program(_serve, config, options, store)

    return served("switchboard", serve)


def create_token(name: str, path: str) -> int:
    """`colibri token create NAME --file PATH`: prints the new token once."""
    try:
        token = TokensFile(path).create(name)
    except ConfigError as exc:
        print(f"colibri token: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"colibri token: cannot write {path}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(token, flush=True)
    print(f"token {name!r} added to {path}; it is shown only now", file=sys.stderr)
    return EXIT_OK


def _auth_refusal(host: str, config: SwitchboardConfig, no_auth: bool) -> str | None:
    """Why serving HTTP on `host` this way is refused, or None. Tokens are required off loopback."""
    if is_loopback(host):
        return None
    if no_auth:
        return f"--no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not {host}"
    if config.tokens_file is None and config.oauth is None:
        return (
            f'--http {host} is not a loopback address: set "auth": {{"tokens_file": PATH}} in the config '
            'and create tokens with `colibri token create NAME --file PATH`, or "auth": {"oauth": '
            '{"issuer": URL}} to accept your identity provider\'s tokens'
        )
    return None


async def _serve(config: SwitchboardConfig, options: Serving, store: AuditStore | None) -> None:
    gateway = board_for(config, store, options.config_path)
    if options.http is None:
        await serve_stdio(gateway, options)
    else:
        await serve_http(gateway, options)


async def _status(config: SwitchboardConfig) -> int:
    """Connect to every downstream, let each have its first verdict, print the table."""
    board = board_for(config).board
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        await board.settled(_settle_timeout(config))
        status = board.status()
        tasks.cancel_scope.cancel()
    print(table(status), flush=True)
    healthy = all(server["state"] == "HEALTHY" for server in status["servers"])
    return EXIT_OK if healthy else EXIT_FAILED


@contextmanager
def _downstreams_stderr_dropped() -> Iterator[None]:
    """Downstream processes write to the stderr they inherit (fd 2): for `status`, whose output is
    its table and its own warnings, fd 2 is /dev/null while they run, and this process writes to a
    copy of the real stderr instead (`sys.stderr`, and the log handlers made meanwhile)."""
    kept = sys.stderr
    kept.flush()
    real = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    ours = open(real, "w", buffering=1, encoding=kept.encoding, errors="backslashreplace")  # noqa: SIM115
    sys.stderr = ours
    try:
        yield
    finally:
        ours.flush()
        os.dup2(real, 2)
        sys.stderr = kept
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is ours:
                handler.setStream(kept)
        ours.close()


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
