"""`colibri ui`: its arguments and its runner (the pages themselves live in colibri.ui)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from colibri.cli.http_address import http_address
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def add_parser(commands: Any) -> None:
    ui = commands.add_parser(
        "ui",
        help="serve read-only pages: the board, the trail, the audit",
        description="Serve the board, the trail and the audit as HTML pages over COLIBRI_DB_PATH, opened "
        "read-only. A token from `colibri token create` is asked for once and kept in a cookie.",
    )
    ui.add_argument("--http", metavar="HOST:PORT", default="127.0.0.1:8765", help="default 127.0.0.1:8765")
    ui.add_argument("--no-auth", action="store_true", help="serve without a token (loopback addresses only)")


def run_ui(config: Config, args: argparse.Namespace) -> int:
    import anyio

    from colibri.core.errors import StorageError
    from colibri.serving import logs
    from colibri.ui.serve import serve_ui

    address = http_address("ui", args, "read the board, the trail and the audit; use a token")
    if address is None:
        return EXIT_USAGE
    host, port = address
    logs.configure(config.log_level)
    try:
        anyio.run(
            lambda: serve_ui(
                config.db_path, host, port, require_token=not args.no_auth, signing_key=config.signing_key
            )
        )
    except StorageError as exc:
        print(f"colibri ui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
