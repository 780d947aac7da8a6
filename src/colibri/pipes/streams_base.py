"""What every stream wrapper in this package shares: `async for` over `receive()`, and `async with`
closing the stream on the way out. Kept apart from pipes/__init__.py, which imports inflight.py."""

from __future__ import annotations

from types import TracebackType
from typing import Self

import anyio
from mcp.shared.message import SessionMessage


class ReceiveIteration:
    """`async for` over a stream whose `receive()` raises `anyio.EndOfStream` at the end."""

    async def receive(self) -> SessionMessage | Exception:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class ClosedOnExit:
    """`async with` over a stream: leaving the block closes it with `aclose()`."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
