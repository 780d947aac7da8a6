"""An HTTP downstream's requests leave in one write each, headers and body together (SPEC §25,
downstream/coalesced.py), and a keep-alive connection carries them one after another."""

from __future__ import annotations

import asyncio
import typing

import httpcore2
import httpx2
import pytest

from colibri.switchboard.downstream.coalesced import Coalesced, coalesced_transport

pytestmark = pytest.mark.anyio


class _Counted(httpcore2.AsyncNetworkBackend):
    """The real network backend, counting the writes each connection makes on its socket."""

    def __init__(self) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self.writes: list[bytes] = []
        self.connections = 0

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.connections += 1
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        writes = self.writes

        class Stream(httpcore2.AsyncNetworkStream):
            async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
                return await stream.read(max_bytes, timeout)

            async def write(self, buffer: bytes, timeout: float | None = None) -> None:
                writes.append(buffer)
                await stream.write(buffer, timeout)

            async def aclose(self) -> None:
                await stream.aclose()

            def get_extra_info(self, info: str) -> typing.Any:
                return stream.get_extra_info(info)

        return Stream()

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A keep-alive HTTP/1.1 server that echoes each request's body."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            body = await reader.readexactly(length)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
    except asyncio.IncompleteReadError:
        writer.close()


async def test_each_request_is_one_write_on_a_kept_connection() -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    counted = _Counted()
    transport = coalesced_transport()
    pool = transport._pool
    assert isinstance(pool, httpcore2.AsyncConnectionPool)
    pool._network_backend = Coalesced(counted)  # the product's backend over a counting one
    try:
        async with httpx2.AsyncClient(transport=transport) as client:
            bodies = [f'{{"jsonrpc":"2.0","id":{n},"method":"ping"}}'.encode() for n in range(3)]
            answers = [await client.post(f"http://127.0.0.1:{port}/mcp", content=body) for body in bodies]
    finally:
        server.close()
        await server.wait_closed()
    assert [answer.content for answer in answers] == bodies
    assert counted.connections == 1
    # One write per request, holding its headers and its whole body.
    assert len(counted.writes) == 3, counted.writes
    for written, body in zip(counted.writes, bodies, strict=True):
        assert written.startswith(b"POST /mcp HTTP/1.1\r\n") and written.endswith(b"\r\n\r\n" + body)


def test_the_downstream_transport_is_built_on_the_coalescing_backend() -> None:
    pool = coalesced_transport()._pool
    assert isinstance(pool, httpcore2.AsyncConnectionPool)
    assert isinstance(pool._network_backend, Coalesced)
