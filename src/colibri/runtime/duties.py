"""What a running server does besides answering calls, whichever transport carries it (SPEC §14).

`serve` on stdio and `serve --http` start the same list, so neither can lack a duty: phase 2 of
the boot, the audit rows of calls answered inline (within a second, with no later call needed),
a checkpoint every COLIBRI_CHECKPOINT_INTERVAL_S while the log grows, and getting a lost
database connection back. The checkpoint at shutdown is `App.close`'s, which both transports
call last.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from colibri.runtime.app import App

Duty = Callable[[], Coroutine[Any, Any, None]]


def duties(app: App) -> list[Duty]:
    """The background work of `app`, to run for as long as it serves."""
    return [app.boot, app.write_later_rows, app.checkpoint_every, app.keep_connected]
