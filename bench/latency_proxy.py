"""A TCP proxy that puts a database "further away" and counts the round trips that cross it.

`python -m bench.latency_proxy LISTEN_PORT TARGET_PORT DELAY_MS` forwards 127.0.0.1:LISTEN_PORT
to 127.0.0.1:TARGET_PORT and holds every chunk the server sends back for DELAY_MS before passing
it on, so each round trip a client waits for takes DELAY_MS longer (a database that far away;
the machine has no `tc netem`). Requests are not delayed: the added round-trip time is DELAY_MS.
A line `delay MS` on stdin changes the delay from then on (answered `delay=MS`), so one replica's
connections can be timed near (0) and far in turns, through the same hops.

It counts round trips two ways. A wait is a message after which the client can go on only
once the server answered: it reads the PostgreSQL frontend protocol the client sends and counts
Sync, Flush and simple Query messages (in pipeline mode psycopg sends statements without either,
and a Flush or a Sync only where it is about to wait for a result), except a Flush right after a
Sync: leaving a pipeline sends the two at once, and waits once. A turn is the client sending
again after the server spoke, which overcounts a pipeline whose statements trickle out while the
first answers come back. On SIGTERM, or when asked with a line on stdin, it prints
`turns=N bytes_up=N bytes_down=N per=N,... up=N,... waits=N,...` to stdout (`per`, `up` and
`waits`: the turns, the bytes sent and the waits of each connection in the order they opened, so a
replica's chain connection, which sends the rows, can be told from its token checks').
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Counts:
    turns: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    delay_s: float = 0.0
    connections: list[_Connection] = field(default_factory=list)

    def line(self) -> str:
        per = ",".join(str(c.turns) for c in self.connections) or "0"
        up = ",".join(str(c.bytes_up) for c in self.connections) or "0"
        waits = ",".join(str(c.frontend.waits) for c in self.connections) or "0"
        totals = f"turns={self.turns} bytes_up={self.bytes_up} bytes_down={self.bytes_down}"
        return f"{totals} per={per} up={up} waits={waits}"


# Untyped messages a client may send before its StartupMessage, each answered before it goes on.
_SSL_REQUEST, _GSSENC_REQUEST = 80877103, 80877104
_WAITING = frozenset(b"SHQ")  # Sync, Flush, Query
_SYNC, _FLUSH = ord("S"), ord("H")


class Frontend:
    """Splits what a client sends into PostgreSQL frontend messages and counts its waits."""

    def __init__(self) -> None:
        self.waits = 0
        self._last = 0  # the type of the message before, to tell a Flush sent with its Sync
        self._buffer = b""
        self._started = False  # past the StartupMessage: every message has a type byte

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while True:
            head = 0 if not self._started else 1
            if len(self._buffer) < head + 4:
                return
            length = int.from_bytes(self._buffer[head : head + 4], "big")
            if len(self._buffer) < head + length:
                return
            message, self._buffer = self._buffer[: head + length], self._buffer[head + length :]
            previous = self._last
            if not self._started:
                code = int.from_bytes(message[4:8], "big")
                self._started = code not in {_SSL_REQUEST, _GSSENC_REQUEST}
            else:
                kind, self._last = message[0], message[0]
                if kind in _WAITING and not (kind == _FLUSH and previous == _SYNC):
                    self.waits += 1


class _Connection:
    """One client connection: the last direction seen tells a new turn from more of the same."""

    def __init__(self, counts: Counts) -> None:
        self.counts = counts
        self.server_spoke = False
        self.turns = 0
        self.bytes_up = 0
        self.frontend = Frontend()
        counts.connections.append(self)

    def up(self, data: bytes) -> None:
        self.frontend.feed(data)
        size = len(data)
        if self.server_spoke:
            self.counts.turns += 1
            self.turns += 1
            self.server_spoke = False
        self.counts.bytes_up += size
        self.bytes_up += size

    def down(self, data: bytes) -> None:
        self.server_spoke = True
        self.counts.bytes_down += len(data)


async def _forward(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    delay_s: Callable[[], float],
    seen: Callable[[bytes], None],
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
            seen(data)
            queue.put_nowait((loop.time() + delay_s(), data))
    except ConnectionError:
        pass
    queue.put_nowait((0.0, b""))
    await sender


async def serve(listen_port: int, target_port: int, counts: Counts) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        connection = _Connection(counts)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy is stopping
            await asyncio.gather(
                _forward(client_reader, server_writer, lambda: 0.0, connection.up),
                _forward(server_reader, client_writer, lambda: counts.delay_s, connection.down),
                return_exceptions=True,
            )

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def asked() -> None:
        asked_for = sys.stdin.readline()
        if asked_for.startswith("delay "):
            counts.delay_s = float(asked_for.split()[1]) / 1000
            print(f"delay={counts.delay_s * 1000:g}", flush=True)
        elif asked_for:
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
    asyncio.run(serve(listen_port, target_port, Counts(delay_s=delay_ms / 1000)))


if __name__ == "__main__":
    main(sys.argv[1:])
