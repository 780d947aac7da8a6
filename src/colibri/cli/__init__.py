"""The `colibri` command: thin wrappers that read configuration, call the library, set exit codes.

Exit codes: 0 success, 1 the operation reported a failure, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from colibri import __version__
from colibri.cli import log as log_cli
from colibri.cli import serve_http as serve_http_cli
from colibri.cli import switchboard_command as switchboard_cli
from colibri.cli import tokens as tokens_cli
from colibri.cli import ui as ui_cli
from colibri.cli.anywhere import subcommands_first
from colibri.cli.db_command import add_db_command
from colibri.core.env import unknown_variables
from colibri.runtime.config import Config, ConfigError, database_folder_problem, signing_key_problem
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="colibri",
        description="Colibri: an audited MCP runtime (colibri serve) and a health-aware MCP gateway "
        "(colibri switchboard). Configuration comes from COLIBRI_* environment variables.",
    )
    parser.add_argument("--version", action="version", version=f"colibri {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the MCP server on stdio (or Streamable HTTP with --http)",
        description="Run the Colibri MCP server over stdio (JSON-RPC on stdout, logs on stderr), or with "
        "--http over Streamable HTTP for a whole team, bearer tokens required. "
        "Reads COLIBRI_MODE, COLIBRI_DB_PATH, COLIBRI_SKILLS_DIR, COLIBRI_LOG_LEVEL, COLIBRI_DB_SYNC.",
    )
    serve_http_cli.add_arguments(serve)
    tokens_cli.add_parser(commands)
    ui_cli.add_parser(commands)
    commands.add_parser(
        "tools",
        help="list the tools admitted in the current mode",
        description="List the tools that COLIBRI_MODE admits, one per line with its description.",
    )
    call = commands.add_parser(
        "call",
        help="call one tool through a fresh server and print the envelope",
        description="Start `colibri serve` as a subprocess with the current environment, call TOOL "
        "through the MCP client and print the response envelope as JSON. Exit 0 when the call "
        "succeeded, 1 when it returned an error (Pattern A or a Pattern B domain error), 2 on usage errors.",
    )
    call.add_argument("tool", metavar="TOOL", help="tool name, e.g. server_health")
    call.add_argument(
        "arguments", metavar="JSON-ARGS", nargs="?", default="{}", help="a JSON object (default {})"
    )

    verify = commands.add_parser(
        "verify",
        help="check a store offline: its chain, seals and rows (--db), its log against a checkpoint",
        description="Open a Colibri store read-only and check it. Plain (or with --db PATH / --db-url "
        "URL): the whole hash chain, every sealed Merkle root, and every log entry re-derived from the "
        "record or call row it logs. With --checkpoint FILE --key VERIFIER_KEY: the log alone against a "
        "signed checkpoint kept elsewhere (its signature, the root of the log's entries at its size, the "
        "log consistent with it since, the stored tree the entries' own); no row is read, and the store "
        "is the one COLIBRI_DB_PATH or COLIBRI_DB_URL names. Given --checkpoint and --db or --db-url, "
        "both checks run, each reported with its own lines, count and rate. Exit 0 when everything "
        "checked verifies, 1 on any break, 2 on unusable input.",
    )
    verify.add_argument(
        "--db",
        metavar="PATH",
        help="database file (default: COLIBRI_DB_PATH or data/colibri.db); with --checkpoint, also "
        "check its chain, seals and rows",
    )
    verify.add_argument(
        "--db-url",
        metavar="URL",
        help="a PostgreSQL store, postgresql://... (default: COLIBRI_DB_URL when --db is not given); "
        "with --checkpoint, also check its chain, seals and rows",
    )
    verify.add_argument("--session", metavar="ID", help="check only this session's records and seal")
    log_cli.add_commands(commands, verify)

    add_db_command(commands)

    switchboard_cli.add_parser(commands)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(subcommands_first(parser, sys.argv[1:] if argv is None else argv))
    if args.command != "call":  # the server `call` starts warns, and its stderr is shown
        for warning in unknown_variables(os.environ):
            print(warning, file=sys.stderr)
    if args.command == "switchboard":
        return switchboard_cli.run(args)
    if args.command == "token":
        return tokens_cli.run(args)
    try:
        config = Config.from_env()
    except ConfigError as exc:
        print(f"colibri: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command in ("serve", "call"):
        # `call` starts a server with this environment: it refuses what that server would refuse.
        problem = tracing_problem() or signing_key_problem(config) or database_folder_problem(config)
        if problem is not None:
            print(f"colibri {args.command}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    if args.command == "serve":
        return _serve(config) if args.http is None else serve_http_cli.run(config, args)
    if args.command == "tools":
        return _tools(config)
    if args.command == "ui":
        return ui_cli.run_ui(config, args)
    if args.command == "call":
        return _call(args.tool, args.arguments)
    if args.command == "db":
        from colibri.verifier.copy import run_copy

        return run_copy(args.source, args.destination)
    log_exit = log_cli.run(args, config)
    if log_exit is None:
        return _verify_store(args, config)
    # SPEC §25: --checkpoint checks the log alone; naming the store with --db or --db-url as well
    # asks for the store's own check too (every entry re-derived from its row), reported after it.
    if args.command != "verify" or log_exit == EXIT_USAGE or not (args.db or args.db_url):
        return log_exit
    print()
    store_exit = _verify_store(args, config)
    return EXIT_USAGE if store_exit == EXIT_USAGE else max(log_exit, store_exit)


def _verify_store(args: argparse.Namespace, config: Config) -> int:
    """`colibri verify [--db PATH | --db-url URL]`: the chain, every seal, each entry from its row."""
    url = args.db_url or (None if args.db else config.db_url)
    if url is not None:
        from colibri.verifier.online import run_verify_url

        return run_verify_url(url, args.session)
    from colibri.verifier.offline import run_verify

    return run_verify(args.db or str(config.db_path), args.session)


def _serve(config: Config) -> int:
    import anyio

    from colibri.runtime.app import App
    from colibri.runtime.server import serve_stdio
    from colibri.serving import logs
    from colibri.serving.tracing import traced

    logs.configure(config.log_level)
    app = App(config)
    database = "none (MINIMAL)" if config.mode.value == "MINIMAL" else _describe_store(config)
    logging.getLogger("colibri").info(
        "colibri %s serving MCP on stdio; mode %s, database %s", __version__, config.mode, database
    )
    with traced("colibri"):
        anyio.run(serve_stdio, app)
    return EXIT_OK


def tracing_problem() -> str | None:
    """Why the OTEL_* variables cannot be served (one line), or None."""
    from colibri.serving import tracing

    try:
        tracing.check()
    except ConfigError as exc:
        return str(exc)
    return None


def _describe_store(config: Config) -> str:
    if config.db_url is not None:
        from colibri.storage.postgres.urls import redact

        return redact(config.db_url)
    return str(config.db_path.resolve())


def _tools(config: Config) -> int:
    from colibri.tools.catalog import TOOLS

    _emit("".join(f"{tool.name}\t{tool.description}\n" for tool in TOOLS if tool.admitted_in(config.mode)))
    return EXIT_OK


def _call(tool: str, raw_arguments: str) -> int:
    try:
        arguments = json.loads(raw_arguments)
    except json.JSONDecodeError as exc:
        print(
            f"colibri call: JSON-ARGS is not valid JSON ({exc}); pass an object such as '{{}}'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        print('colibri call: JSON-ARGS must be a JSON object such as \'{"task_id": "T-1"}\'', file=sys.stderr)
        return EXIT_USAGE
    import anyio

    from colibri.client import ServerDidNotStart, call_once

    # The server started for one call shows its warnings (a first boot's new key), not the banner
    # and INFO lines of `colibri serve`, unless COLIBRI_LOG_LEVEL asks for them.
    os.environ.setdefault("COLIBRI_LOG_LEVEL", "warn")
    try:
        envelope = anyio.run(call_once, tool, arguments)
    except ServerDidNotStart as exc:
        print(f"colibri call: the server ended before it answered: {exc}", file=sys.stderr)
        # Its configuration refused (exit 2) is ours too; anything else is a failure at run time.
        return EXIT_USAGE if exc.exit_code == EXIT_USAGE else EXIT_FAILED
    _emit(json.dumps(envelope, indent=2, ensure_ascii=False) + "\n")
    failed = envelope.get("ok") is not True or (
        isinstance(envelope.get("data"), dict) and envelope["data"].get("ok") is False
    )
    return EXIT_FAILED if failed else EXIT_OK


def _emit(text: str) -> None:
    """Write to stdout; a reader that stops early (`colibri tools | head -1`) is not an error."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Nothing more can reach the reader; point stdout at /dev/null so the flush at exit is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
