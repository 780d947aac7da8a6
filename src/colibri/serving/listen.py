"""Opening the listening socket before anything else starts, so a bad address is one line.

uvicorn binds inside its own start-up and leaves with `sys.exit(1)` after logging the error,
which under a task group becomes a long ExceptionGroup traceback printed after the program's
"serving" banner. The socket is bound here first; its failure is an `AddressError`.
"""

from __future__ import annotations

import errno
import socket
from typing import Any

from colibri.serving.errors import AddressError
from colibri.serving.exits import EXIT_FAILED, EXIT_USAGE
from colibri.serving.hosts import bracketed

# Why a bind failed, by errno, in words that say what to change (all are configuration: exit 2).
_REASONS = {
    errno.EADDRINUSE: "the port is already in use by another process; stop it or choose another port",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's; use one of its addresses or 0.0.0.0",
    errno.EACCES: "permission denied (ports below 1024 need privileges); choose a port from 1024 up",
}


def listen(host: str, port: int) -> socket.socket:
    """A bound TCP socket on HOST:PORT for uvicorn to serve; `AddressError` names the address
    and the reason: exit 2 when the address must change, 1 for any other failure."""
    shown = f"{bracketed(host)}:{port}"
    try:
        family, address = _resolved(host, port)
    except socket.gaierror as exc:
        message = f"cannot listen on {shown}: the host name does not resolve ({exc.strerror})"
        raise AddressError(f"{message}; use an address of this machine, e.g. 127.0.0.1:{port}") from exc
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on connections whose socket says
    # so, and without it every answer written in two parts (headers, then body) waited for the
    # client's delayed ACK — 40 ms per response on keep-alive connections.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        # Listening from here: a client that connects before the server loop runs waits in the
        # backlog instead of being refused.
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = _REASONS.get(exc.errno or 0)
        if reason is None:
            raise AddressError(f"cannot listen on {shown}: {exc.strerror or exc}", EXIT_FAILED) from exc
        raise AddressError(f"cannot listen on {shown}: {reason}", EXIT_USAGE) from exc
    sock.set_inheritable(True)
    return sock


def _resolved(host: str, port: int) -> tuple[socket.AddressFamily, Any]:
    """The first address of `host`, IPv4 before IPv6 (as uvicorn would bind `localhost`)."""
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = min(found, key=lambda info: info[0] != socket.AF_INET)
    return family, address
