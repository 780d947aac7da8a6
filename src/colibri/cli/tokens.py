"""`colibri token`: bearer tokens for `colibri serve --http` (in the database) or for a switchboard
(in its tokens file, with `create --file PATH`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from colibri.core.principals import reserved
from colibri.runtime.config import Config, ConfigError
from colibri.serving.exits import EXIT_USAGE


def add_parser(commands: Any) -> None:
    token = commands.add_parser(
        "token",
        help="create, list or revoke bearer tokens (colibri serve --http, or a switchboard's tokens file)",
        description="Manage the bearer tokens of colibri serve --http, stored (as SHA-256 only) in "
        "COLIBRI_DB_PATH; with `create --file PATH`, add one to a switchboard's tokens file instead.",
    )
    token_actions = token.add_subparsers(dest="token_action", metavar="ACTION", required=True)
    create = token_actions.add_parser("create", help="make a token and print it once")
    create.add_argument("name", metavar="NAME", help="the principal recorded in every audit row")
    create.add_argument("--scope", choices=["read", "write"], help="required for a database token")
    create.add_argument(
        "--file",
        metavar="PATH",
        help='a switchboard\'s tokens file ("auth.tokens_file") instead of the database',
    )
    create.add_argument("--expires-days", type=int, metavar="N", help="expire after N days (default never)")
    token_actions.add_parser("list", help="names, scopes, status and expiry (never the tokens)")
    revoke = token_actions.add_parser("revoke", help="refuse this token from now on")
    revoke.add_argument("name", metavar="NAME")


def run(args: argparse.Namespace) -> int:
    if args.token_action == "create":
        problem = _create_problem(args)
        if problem:
            print(f"colibri token create: {problem}", file=sys.stderr)
            return EXIT_USAGE
        if args.file is not None:
            from colibri.switchboard.program import create_token

            return create_token(args.name, args.file)
    try:
        config = Config.from_env()
    except ConfigError as exc:
        print(f"colibri: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from colibri.runtime.token_admin import run_token

    name = getattr(args, "name", None)
    return run_token(
        config, args.token_action, name, getattr(args, "scope", ""), getattr(args, "expires_days", None)
    )


def _create_problem(args: argparse.Namespace) -> str | None:
    if (taken := reserved(args.name)) is not None:
        return f"{taken}; choose another name"
    if args.file is not None and (args.scope is not None or args.expires_days is not None):
        return "--file writes a switchboard tokens file, which has no --scope or --expires-days; drop them"
    if args.file is None and args.scope is None:
        return "--scope read|write is required (or --file PATH for a switchboard's tokens file)"
    return None
