"""What the background duties read of a running server (`App`), as a protocol: the duties' modules
sit below app.py, which imports them, so they name this instead of the class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import anyio

from colibri.core.state import ServerState
from colibri.runtime.config import Config

if TYPE_CHECKING:
    from colibri.chain.pipeline import Chain


class Running(Protocol):
    """The running server: its configuration, live state, chain, and the event phase 2 sets."""

    config: Config
    state: ServerState
    ready: anyio.Event

    @property
    def chain(self) -> Chain: ...
