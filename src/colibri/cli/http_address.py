"""The `--http HOST:PORT` argument of `colibri serve` and `colibri ui`, and the one rule on it:
`--no-auth` only on a loopback address."""

from __future__ import annotations

import argparse
import sys


def http_address(command: str, args: argparse.Namespace, exposed: str) -> tuple[str, int] | None:
    """(host, port) from `args.http`, or None once the refusal is printed under `colibri {command}`;
    `exposed` tells what anyone could do on a non-loopback address served without a token."""
    # Imported here: the HTTP stack (anyio, the SDK) is not loaded by commands that never serve.
    from colibri.serving.address import parse_address
    from colibri.serving.http import is_loopback

    try:
        host, port = parse_address(args.http)
    except ValueError as exc:
        print(f"colibri {command}: {exc}", file=sys.stderr)
        return None
    if args.no_auth and not is_loopback(host):
        print(
            f"colibri {command}: --no-auth is refused for {host}, which is not a loopback address: "
            f"anyone who can reach it could {exposed}",
            file=sys.stderr,
        )
        return None
    return host, port
