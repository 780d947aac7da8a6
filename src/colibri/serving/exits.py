"""The exit codes of every `colibri` command."""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0  # success
EXIT_FAILED: Final = 1  # the operation ran and reported a failure (an error envelope, a break, ...)
EXIT_USAGE: Final = 2  # usage or configuration error; nothing ran
