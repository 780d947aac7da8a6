"""`colibri ui`: its arguments and its runner (the pages themselves live in colibri.ui)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from colibri.cli import oauth_options
from colibri.cli.http_address import http_address, http_limits
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_FAILED, EXIT_USAGE

if TYPE_CHECKING:
    from colibri.domains.log.note import Verifier


def add_parser(commands: Any) -> None:
    ui = commands.add_parser(
        "ui",
        help="serve read-only pages: the board, the trail, the audit",
        description="Serve the board, the trail and the audit as HTML pages over the store (COLIBRI_DB_URL "
        "when set, else COLIBRI_DB_PATH), opened read-only. A token from `colibri token create` is asked "
        "for once and kept in a cookie. "
        "Limits: the COLIBRI_HTTP_* variables.",
    )
    ui.add_argument("--http", metavar="HOST:PORT", default="127.0.0.1:8765", help="default 127.0.0.1:8765")
    ui.add_argument("--no-auth", action="store_true", help="serve without a token (loopback addresses only)")
    ui.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name people use to reach the pages (Host/Origin allow-list); repeatable",
    )
    ui.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL people use, e.g. https://colibri.example.com (https makes the cookie Secure)",
    )
    ui.add_argument(
        "--verifier-key",
        metavar="KEY",
        help="the log's verifier key (NAME+HASH+KEY): checkpoints' signatures are checked with it",
    )
    ui.add_argument(
        "--switchboard-config",
        metavar="FILE",
        help="the config of the switchboard whose audit store this is (named in /pins' approve commands)",
    )
    oauth_options.add_arguments(ui)


def run_ui(config: Config, args: argparse.Namespace) -> int:
    import anyio

    from colibri.core.errors import StorageError
    from colibri.serving import logs
    from colibri.serving.errors import served
    from colibri.ui.serve import UiOptions, serve_ui

    address = http_address("ui", args, "read the board, the trail and the audit; use a token")
    limits = http_limits("ui")
    if address is None or limits is None:
        return EXIT_USAGE
    try:
        verifier = _verifier(args.verifier_key)
        oauth = oauth_options.oauth_settings(args)
    except ValueError as exc:
        print(f"colibri ui: {exc}", file=sys.stderr)
        return EXIT_USAGE
    host, port = address
    options = UiOptions(
        host,
        port,
        require_token=not args.no_auth,
        allowed_hosts=tuple(args.allow_host),
        public_url=args.public_url,
        verifier=verifier,
        limits=limits,
        switchboard_config=args.switchboard_config,
        oauth=oauth,
    )
    logs.configure(config.log_level)
    try:
        return served("ui", lambda: anyio.run(serve_ui, config.db_target, options))
    except StorageError as exc:
        # Found once the address is bound (its problems are reported first, as before): a path that
        # names no file is the configuration's problem, one that fails to open the store's.
        missing = _missing_database(config)
        print(f"colibri ui: {missing or exc}", file=sys.stderr)
        return EXIT_FAILED if missing is None else EXIT_USAGE


def _missing_database(config: Config) -> str | None:
    """Why COLIBRI_DB_PATH names no database the pages could show, or None (a PostgreSQL URL is
    checked by connecting). A configuration problem, so exit 2; a store that fails once opened is 1."""
    path = config.db_path
    if config.db_url is not None or path.is_file():
        return None
    what = "a folder" if path.is_dir() else "no such file"
    return (
        f"COLIBRI_DB_PATH={path} names no database ({what}); point it at a Colibri database file, "
        "or create one by running `colibri serve` once in FULL"
    )


def _verifier(text: str | None) -> Verifier | None:
    """The parsed --verifier-key (None when not given); ValueError saying what a key looks like."""
    if text is None:
        return None
    from colibri.domains.log.note import NoteError, Verifier

    try:
        return Verifier.parse(text)
    except NoteError as exc:
        raise ValueError(
            f"--verifier-key is not a verifier key ({exc}); give the NAME+HASH+KEY line the log's "
            "checkpoints are signed for"
        ) from exc
