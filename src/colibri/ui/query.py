"""Query strings read strictly: UTF-8 text only, every value within its length.

Starlette decodes a query leniently (bytes that are not UTF-8 become U+FFFD), so a filter could
silently match something other than what was sent. The pages read the raw query instead and
refuse, with a 400 page naming the parameter, a value that is not UTF-8 or longer than it may be.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

DEFAULT_LIMIT = 200  # characters of any parameter without a limit of its own
SHOWN = 40  # characters of a refused value repeated in the message


class BadQuery(ValueError):
    """A query the pages refuse; the message names the parameter and what would be right."""


def parse_query(raw: bytes) -> dict[str, str]:
    """The parameters of a raw query string (the first of repeated ones); BadQuery when a name or
    a value is not UTF-8 once percent-decoded."""
    params: dict[str, str] = {}
    for part in raw.split(b"&"):
        if not part:
            continue
        raw_name, _, raw_value = part.partition(b"=")
        name = _text(raw_name, None)
        params.setdefault(name, _text(raw_value, name))
    return params


def limited(params: dict[str, str], name: str, limit: int = DEFAULT_LIMIT) -> str | None:
    """Parameter `name` (None when absent or empty); BadQuery when longer than `limit` characters."""
    value = params.get(name) or None
    if value is not None and len(value) > limit:
        raise BadQuery(
            f"{name} is {len(value):,} characters long ({value[:SHOWN]!r}…); it may have at most {limit}."
        )
    return value


def _text(raw: bytes, name: str | None) -> str:
    decoded = unquote_to_bytes(raw.replace(b"+", b" "))
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        what = "a query parameter's name" if name is None else f"the value of {name}"
        shown = decoded[:SHOWN].decode("utf-8", "backslashreplace")
        raise BadQuery(
            f"{what} is not UTF-8 text ({shown!r}); send its UTF-8 bytes, percent-encoded."
        ) from None
