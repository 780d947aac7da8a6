"""What `colibri serve --http` and `colibri ui` share at the command line: the `--http HOST:PORT`
argument and its one rule (`--no-auth` only on a loopback address), and the `COLIBRI_HTTP_*` limits.
Start-up failures are told in one line by `serving.errors.served`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the HTTP stack loads only for the commands that serve
    from colibri.serving.http_limits import HttpLimits


def http_address(command: str, args: argparse.Namespace, exposed: str) -> tuple[str, int] | None:
    """(host, port) from `args.http`, or None once the refusal is printed under `colibri {command}`;
    `exposed` tells what anyone could do on a non-loopback address served without a token."""
    # Imported here: the HTTP stack (anyio, the SDK) is not loaded by commands that never serve.
    from colibri.serving.address import parse_address
    from colibri.serving.hosts import is_loopback

    try:
        host, port = parse_address(args.http)
    except ValueError as exc:
        print(f"colibri {command}: {exc}", file=sys.stderr)
        return None
    if args.no_auth and not is_loopback(host):
        print(
            f"colibri {command}: --no-auth is refused for {host}, which is not a loopback address "
            f"(127.0.0.0/8, ::1, localhost): anyone who can reach it could {exposed}",
            file=sys.stderr,
        )
        return None
    return host, port


def http_limits(command: str) -> HttpLimits | None:
    """The COLIBRI_HTTP_* limits, or None once the refusal naming the variable is printed."""
    from colibri.serving.http_limits import HttpLimits

    try:
        return HttpLimits.from_env(os.environ)
    except ValueError as exc:
        print(f"colibri {command}: {exc}", file=sys.stderr)
        return None
