"""A TCP proxy that puts a database "further away" and counts the round trips that cross it.

`python -m bench.latency_proxy LISTEN_PORT TARGET_PORT DELAY_MS` forwards 127.0.0.1:LISTEN_PORT
to 127.0.0.1:TARGET_PORT and holds every chunk the server sends back for DELAY_MS before passing
it on, so each round trip a client waits for takes DELAY_MS longer (a database that far away;
the machine has no `tc netem`). Requests are not delayed: the added round-trip time is DELAY_MS.

It counts round trips as it sees them: a turn is the client sending again after the server
spoke, i.e. one time the client waited for an answer before going on (a pipelined burst of
statements is one turn). On SIGTERM, or when asked with a line on stdin, it prints
`turns=N bytes_up=N bytes_down=N per=N,N,...` to stdout (`per`: the turns of each connection
in the order they opened, so a replica's chain connection can be told from its token checks').
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass, field


@dataclass
class Counts:
    turns: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    connections: list[_Connection] = field(default_factory=list)

    def line(self) -> str:
        per = ",".join(str(c.turns) for c in self.connections) or "0"
        return f"turns={self.turns} bytes_up={self.bytes_up} bytes_down={self.bytes_down} per={per}"


class _Connection:
    """One client connection: the last direction seen tells a new turn from more of the same."""

    def __init__(self, counts: Counts) -> None:
        self.counts = counts
        self.server_spoke = False
        self.turns = 0
        counts.connections.append(self)

    def up(self, size: int) -> None:
        if self.server_spoke:
            self.counts.turns += 1
            self.turns += 1
            self.server_spoke = False
        self.counts.bytes_up += size

    def down(self, size: int) -> None:
        self.server_spoke = True
        self.counts.bytes_down += size


async def _forward(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float, seen: object
) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(send())
    try:
        while data := await reader.read(1 << 16):
            seen(len(data))  # type: ignore[operator]
            queue.put_nowait((loop.time() + delay_s, data))
    except ConnectionError:
        pass
    queue.put_nowait((0.0, b""))
    await sender


async def serve(listen_port: int, target_port: int, delay_s: float, counts: Counts) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        connection = _Connection(counts)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy is stopping
            await asyncio.gather(
                _forward(client_reader, server_writer, 0.0, connection.up),
                _forward(server_reader, client_writer, delay_s, connection.down),
                return_exceptions=True,
            )

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def asked() -> None:
        if sys.stdin.readline():
            print(counts.line(), flush=True)
        else:  # stdin closed: the bench is gone
            loop.remove_reader(sys.stdin.fileno())
            stop.set()

    loop.add_reader(sys.stdin.fileno(), asked)
    print("ready", flush=True)
    async with server:
        await stop.wait()
    print(counts.line(), flush=True)


def main(argv: list[str]) -> None:
    listen_port, target_port, delay_ms = int(argv[0]), int(argv[1]), float(argv[2])
    asyncio.run(serve(listen_port, target_port, delay_ms / 1000, Counts()))


if __name__ == "__main__":
    main(sys.argv[1:])
