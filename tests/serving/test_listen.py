"""The listening socket `listen` opens gives every accepted connection TCP_NODELAY, as a socket
asyncio opens itself would: without it an answer written in two parts (uvicorn writes the headers,
then the body) waits for the client's delayed ACK, 40 ms per response on a keep-alive connection."""

from __future__ import annotations

import asyncio
import socket

import pytest

from colibri.serving.listen import listen

pytestmark = pytest.mark.anyio


# asyncio's own loop and uvloop, the loop `serve --http` runs on (serving/http.py's stack).
@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, bool]]:
    backend: tuple[str, dict[str, bool]] = request.param
    return backend


async def test_connections_accepted_on_a_listened_socket_do_not_wait_for_delayed_acks() -> None:
    sock = listen("127.0.0.1", 0)
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[int] = loop.create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("socket")
            accepted.set_result(peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await loop.create_server(Probe, sock=sock)  # as uvicorn serves `sockets=[sock]`
    try:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        assert await asyncio.wait_for(accepted, 10) == 1
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
