"""A failure from a downstream (often an exception group) said in one line for the status table.

What is said names the kind of failure, never the command, arguments or URL it concerned: those may
hold a secret the environment put in (SPEC §14); `hide` masks any that an exception's text repeats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mcp.shared.exceptions import MCPError

SHORTEST_SECRET = 3  # a shorter value masked everywhere would garble the message, and hides nothing


def describe_connect_error(error: BaseException) -> str:
    """Why starting or reaching a downstream failed: `cannot start: no such file or directory`."""
    leaf = next(leaves(error), error)
    if isinstance(leaf, OSError):
        # strerror only: str(leaf) names the file, which is the (expanded) command
        return f"cannot start: {(leaf.strerror or type(leaf).__name__).lower()}"
    if isinstance(leaf, MCPError):
        return f"handshake failed: {leaf.error.message}"
    return f"connection failed: {describe_failure(leaf)}"


def describe_failure(error: BaseException) -> str:
    leaf = next(leaves(error), error)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {first_line(text)}" if text else type(leaf).__name__


def hide(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret of at least SHORTEST_SECRET characters masked as `***`."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= SHORTEST_SECRET:
            text = text.replace(secret, "***")
    return text


def leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"
