"""What can stop a program from serving, each error with the exit code its command leaves with.

ServingError        one line for stderr (str) and `exit_code`
 ├── AddressError   the address cannot be listened on (unresolvable, in use, not this machine's)
 └── UnsafeFile     a secrets file others could write to (a tokens file mode 0666)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from colibri.serving.exits import EXIT_OK, EXIT_USAGE


class ServingError(Exception):
    """A start-up failure the command reports in one line, then leaves with `exit_code`."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class AddressError(ServingError):
    """The HOST:PORT given cannot be listened on; the message names it and the reason."""


class UnsafeFile(ServingError):
    """A file that holds secrets is writable by other users; the message names it and the fix."""


def served(command: str, serve: Callable[[], object]) -> int:
    """Run `serve` (an `anyio.run` of a face) and return the command's exit code: a `ServingError`,
    even one raised inside a task group, is one line on stderr under `colibri {command}` and its
    exit code, never a traceback."""
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
