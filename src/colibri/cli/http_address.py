"""What `colibri serve --http` and `colibri ui` share at the command line: the `--http HOST:PORT`
argument and its one rule (`--no-auth` only on a loopback address), the `COLIBRI_HTTP_*` limits,
and start-up failures told in one line with their exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from colibri.serving.exits import EXIT_OK

if TYPE_CHECKING:  # the HTTP stack loads only for the commands that serve
    from colibri.serving.errors import ServingError
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


def served(command: str, serve: Callable[[], object]) -> int:
    """Run `serve` (an `anyio.run` of a face); a start-up failure (`ServingError`: an address
    that cannot be listened on, ...) is one line on stderr and its exit code, never a traceback."""
    from colibri.serving.errors import ServingError

    failure: ServingError | None = None
    try:
        serve()
    except* ServingError as group:
        failure = _first(group)
    if failure is None:
        return EXIT_OK
    print(f"colibri {command}: {failure}", file=sys.stderr)
    return failure.exit_code


def _first(group: BaseExceptionGroup[ServingError]) -> ServingError:
    leaf = group.exceptions[0]
    return _first(leaf) if isinstance(leaf, BaseExceptionGroup) else leaf
