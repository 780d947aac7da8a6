"""Text that can always be written as UTF-8.

File names on POSIX are bytes; Python hands the ones that are not UTF-8 over as strings holding
lone surrogates (surrogateescape), which no JSON encoder or UTF-8 writer accepts. Shown to a
client they become their bytes in backslash form: `bad\\xff`.
"""

from __future__ import annotations

from typing import Any


def printable(text: str) -> str:
    """`text` unchanged when it is valid Unicode; else its undecodable bytes as `\\xNN`."""
    try:
        text.encode()
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that did not come from a byte: escape it as itself
            return text.encode("utf-8", "backslashreplace").decode()
    return text


def printable_tree(value: Any) -> Any:
    """`printable` applied to every string (keys too) of a JSON-like value."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_tree(key): printable_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [printable_tree(item) for item in value]
    return value
