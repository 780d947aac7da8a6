"""`colibri serve --http`: its options and its runner (the server itself is runtime/http.py)."""

from __future__ import annotations

import argparse
import sys

from colibri.cli import oauth_options
from colibri.cli.http_address import http_address, http_limits
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_USAGE


def add_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio"
    )
    serve.add_argument(
        "--no-auth", action="store_true", help="accept requests without a token (loopback addresses only)"
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients use to reach the server (Host/Origin allow-list); repeatable",
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the base URL clients use, e.g. https://colibri.example.com (https makes the cookie Secure)",
    )
    oauth_options.add_arguments(serve)


def run(config: Config, args: argparse.Namespace) -> int:
    from colibri.runtime.app import App
    from colibri.runtime.http import HttpOptions, serve_http
    from colibri.serving import logs
    from colibri.serving.errors import served
    from colibri.serving.http import run_program
    from colibri.serving.tracing import traced
    from colibri.ui.checker import CHECKER
    from colibri.ui.pages import page_routes

    address = http_address("serve", args, "call every tool; create a token with `colibri token create`")
    limits = http_limits("serve")
    if address is None or limits is None:
        return EXIT_USAGE
    try:
        oauth = oauth_options.oauth_settings(args)
    except ValueError as exc:
        print(f"colibri serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    host, port = address
    logs.configure(config.log_level)

    options = HttpOptions(
        host,
        port,
        not args.no_auth,
        tuple(args.allow_host),
        args.public_url,
        pages=lambda reader, oauth_verifier: page_routes(
            reader,
            require_token=not args.no_auth,
            verifier=reader.verifier,
            public_url=args.public_url,
            oauth=oauth_verifier,
        ),
        limits=limits,
        oauth=oauth,
    )

    def serve() -> None:
        with traced("colibri"):
            run_program(serve_http, App(config), options)

    try:
        return served("serve", serve)
    finally:
        CHECKER.shutdown()  # the pages' background checks end with the server, a long one too
