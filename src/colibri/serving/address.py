"""The one parser of `HOST:PORT` arguments (`--http`, `--metrics`)."""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str, flag: str = "--http") -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `PORT` (loopback) → (host, port); `flag` names the option
    in the refusal."""
    host, colon, port_text = text.rpartition(":")
    host = host.strip("[]") if colon else DEFAULT_HOST
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(
            f"{flag} {text!r}: expected HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8765"
        )
    return host or DEFAULT_HOST, int(port_text)
