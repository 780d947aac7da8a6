"""An HTTP downstream's requests written in one piece: headers and body in a single send (SPEC §25).

httpcore writes a request as it builds it: its headers, then its body, each its own `send` on the
socket. On loopback every send runs the receiver's side of TCP and wakes it, so a routed call paid
two sends and woke the downstream twice — in a profile of 8 clients through the HTTP face, these
writes were the largest single cost of the switchboard's downstream path. `Coalesced` keeps what
httpcore writes until it reads (an HTTP/1.1 client sends its whole request before it reads the
response), then sends it at once. A failed send is raised from that read as the `WriteError` it is,
after the request may have left: the call counts as sent, as any failure after connecting does.
"""

from __future__ import annotations

import ssl
import typing

import httpcore2
import httpx2
from httpcore2 import AsyncNetworkBackend, AsyncNetworkStream


def coalesced_transport() -> httpx2.AsyncHTTPTransport:
    """httpx's transport over connections that send each request in one write."""
    transport = httpx2.AsyncHTTPTransport()
    pool = transport._pool  # httpx takes no network backend of its own
    if not isinstance(pool, httpcore2.AsyncConnectionPool):
        raise TypeError(f"expected httpx's own connection pool, got {type(pool).__name__}")
    pool._network_backend = Coalesced()  # read only when a connection is opened
    return transport


class Coalesced(AsyncNetworkBackend):
    """A network backend whose streams send each request in one write (see the module)."""

    def __init__(self, inner: AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _Stream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        return _Stream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Stream(AsyncNetworkStream):
    """One connection: writes kept until the next read (or TLS upgrade), then sent together."""

    def __init__(self, inner: AsyncNetworkStream) -> None:
        self._inner = inner
        self._held: list[bytes] = []
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._held.append(buffer)
            self._timeout = timeout

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush()
        return await self._inner.read(max_bytes, timeout)

    async def _flush(self) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            await self._inner.write(data, self._timeout)

    async def aclose(self) -> None:
        self._held.clear()
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        await self._flush()
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)
