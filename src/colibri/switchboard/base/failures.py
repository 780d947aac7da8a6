"""A failure from a downstream (often an exception group) said in one line for the status table."""

from __future__ import annotations

from collections.abc import Iterator

from mcp.shared.exceptions import MCPError


def describe_connect_error(target: str | None, error: BaseException) -> str:
    """Why connecting to `target` (the command started, or the URL) failed."""
    leaf = next(leaves(error), error)
    if isinstance(leaf, OSError):
        return f"cannot start {target}: {leaf}"
    if isinstance(leaf, MCPError):
        return f"handshake failed: {leaf.error.message}"
    return f"connection failed: {describe_failure(leaf)}"


def describe_failure(error: BaseException) -> str:
    leaf = next(leaves(error), error)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {first_line(text)}" if text else type(leaf).__name__


def leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"
