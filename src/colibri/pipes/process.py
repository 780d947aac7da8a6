"""A downstream server process (POSIX) and its stdin/stdout pipes, as an MCP transport."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from types import TracebackType
from typing import IO

import anyio
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

from colibri.pipes.diverting import DivertingReader
from colibri.pipes.reader import LINE_LIMIT, LineReader
from colibri.pipes.writer import LineWriter


class ProcessTransport:
    """An MCP `Transport`: a downstream server process and its stdin/stdout pipes (POSIX)."""

    # Our own client gives us 2 s after closing our stdin before it signals us, and 2 s more before
    # SIGKILL (the MCP shutdown sequence, the SDK's timings). A killed switchboard cannot stop its
    # downstreams, each in a process group of its own, so their stop must fit in the first 2 s.
    EOF_WAIT_S = 1.0  # a server that leaves at the end of its input has this long
    TERM_WAIT_S = 0.8  # then SIGTERM, and this long before SIGKILL
    KILL_WAIT_S = 2.0  # then SIGKILL, and this long for the kernel to reap it

    def __init__(self, params: StdioServerParameters, stderr: IO[str] | None = None) -> None:
        self._params = params
        self._stderr = stderr  # None: the server writes to our own stderr
        self._process: asyncio.subprocess.Process | None = None
        self._stdout: asyncio.ReadTransport | None = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has ended (and been waited for), else None."""
        return None if self._process is None else self._process.returncode

    async def __aenter__(self) -> tuple[LineReader, LineWriter]:
        params = self._params
        # The server's stdout is a pipe of our own, read by a `DivertingReader` (a divert may take
        # its lines as they arrive); asyncio's own stdout reader could not be one.
        read_fd, write_fd = os.pipe()
        try:
            self._process = process = await asyncio.create_subprocess_exec(
                params.command,
                *params.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_fd,
                stderr=self._stderr,
                env=get_default_environment() | (params.env or {}),
                cwd=params.cwd,
                start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        reader = DivertingReader(LINE_LIMIT)
        stdout = os.fdopen(read_fd, "rb", buffering=0)
        loop = asyncio.get_running_loop()
        self._stdout, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdout)
        assert process.stdin is not None
        return LineReader(reader, self._stdout), LineWriter(process.stdin)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        process = self._process
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            await self._stop(process)
        if self._stdout is not None:
            self._stdout.close()

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        """Close stdin and wait; then SIGTERM, then SIGKILL, to the whole process group."""
        assert process.stdin is not None
        process.stdin.close()
        for signum, wait_s in (
            (None, self.EOF_WAIT_S),
            (signal.SIGTERM, self.TERM_WAIT_S),
            (signal.SIGKILL, self.KILL_WAIT_S),
        ):
            if signum is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signum)
            with anyio.move_on_after(wait_s):
                await process.wait()
                return
