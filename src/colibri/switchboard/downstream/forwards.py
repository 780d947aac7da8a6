"""Progress notifications of a downstream call on their way to the client, so its result waits for them."""

from __future__ import annotations

import anyio


class Forwards:
    """Progress notifications being passed on to the client."""

    SETTLE_S = 1.0

    def __init__(self) -> None:
        self._open = 0
        self._idle = anyio.Event()

    def __enter__(self) -> None:
        self._open += 1

    def __exit__(self, *exc: object) -> None:
        self._open -= 1
        if self._open == 0:
            self._idle.set()
            self._idle = anyio.Event()

    async def settled(self) -> None:
        await anyio.lowlevel.checkpoint()  # forwards already scheduled start before this returns
        with anyio.move_on_after(self.SETTLE_S):
            while self._open:
                await self._idle.wait()
