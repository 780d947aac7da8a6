"""The one signal policy: SIGTERM or SIGINT asks the program to stop, once, gracefully.

The program's `stop` finishes the work in flight and closes what it owns. The HTTP runner's
stop ends its server loop and everything unwinds normally; the stdio runner's stop then has
to `leave`, since a thread blocked reading a stdin that is not a pipe cannot be joined.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import NoReturn

import anyio

from colibri.serving.exits import EXIT_OK

log = logging.getLogger("colibri")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
DRAIN_GRACE_S = 10.0  # the longest a stop may take before the process leaves anyway

Stop = Callable[[], Awaitable[None]]


async def on_stop_signal(stop: Stop, *, what: str = "stopping") -> None:
    """Wait for SIGTERM or SIGINT, then run `stop` (bounded by DRAIN_GRACE_S)."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async for signum in signals:
            log.info("received %s: %s", signal.Signals(signum).name, what)
            break
    with anyio.move_on_after(DRAIN_GRACE_S):
        await stop()


def leave(status: int = EXIT_OK) -> NoReturn:
    """End the process now, without joining threads: everything we own is closed by then."""
    sys.stderr.flush()
    os._exit(status)
