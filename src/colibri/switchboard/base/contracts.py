"""What the switchboard and its downstream connections promise each other (the SDK edge's interfaces).

`DownstreamSession` is an open connection as the switchboard uses it (a `Connector`, in
downstream/supervisor.py, opens one); `Hooks` is what a connection reports to its owner; `Caller`
is the client request a downstream call serves, where its progress, logs and the downstream's own
requests go.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import mcp_types as types

from colibri.switchboard.base.errors import DownstreamError

ResultT = TypeVar("ResultT", bound=types.Result)
Progress = Callable[[float, float | None, str | None], Awaitable[None]]
# Progress told without a task: what it returns is awaited only when it is awaitable.
Notify = Callable[[float, float | None, str | None], object]
# Where a call's outcome goes: the downstream's raw result, or the error the call came to.
Done = Callable[[dict[str, Any] | DownstreamError], None]
# Gives up a call sent with a `Done` (the reason goes to the downstream); its `Done` is never called.
Abandon = Callable[[str], None]
# The `_meta` entries of a call's on-behalf-of statement for a downstream Colibri, signed when asked
# (routing/vouching.py's `Statements`; SPEC §20).
Vouch = Callable[[], dict[str, Any]]
# Where a downstream's notifications (other than a call's own log lines) go, with its name.
Notified = Callable[[str, types.ServerNotification], Awaitable[None]]


class Relay(Protocol):
    """Where a downstream's own requests (sampling, elicitation, roots) are answered: a client."""

    async def __call__(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT: ...


class Caller(Protocol):
    """The client request a downstream call serves: its progress, logs and the downstream's requests."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None: ...

    async def log(self, params: types.LoggingMessageNotificationParams) -> None: ...

    async def request(self, request: types.ServerRequest, result_type: type[ResultT]) -> ResultT: ...


# The `Caller` of the call a task routes (routing's `Route.run` sets it): where an observer that holds
# the call before sending it tells progress and asks its user (approvals, SPEC §22).
ROUTED_CALLER: ContextVar[Caller | None] = ContextVar("colibri_switchboard_routed_caller", default=None)


async def _no_news(notification: types.ServerNotification) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the connection tells its owner: it closed, a list changed, a notification came; and what
    it asks: the only call in flight (a downstream's own requests go to their call's `Caller`)."""

    closed: Callable[[str], None]
    tools_changed: Callable[[], None]
    lists_changed: Callable[[], None] = lambda: None
    notified: Callable[[types.ServerNotification], Awaitable[None]] = _no_news
    # The only call in flight on the connection, or None (none, or several): what a message that
    # names no request may be tied to (downstream/owners.py).
    sole: Callable[[], Caller | None] = lambda: None


class DownstreamSession(Protocol):
    """An open connection to one downstream, as the switchboard uses it."""

    @property
    def server_name(self) -> str | None: ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def is_closed(self) -> bool: ...

    async def wait_closed(self) -> None: ...

    async def ping(self, timeout: float) -> None: ...

    async def list_tools(self, timeout: float) -> list[types.Tool]: ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None = None
    ) -> types.CallToolResult: ...

    async def call_raw(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Progress | None = None
    ) -> dict[str, Any]: ...

    def send_raw(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Notify, done: Done
    ) -> Abandon | None:
        """`call_raw` without a task, when the connection can (else None, and nothing is sent).

        The result handed to `done` is raw: checking it against the tool's schemas is the caller's.
        """

    @property
    def capabilities(self) -> types.ServerCapabilities: ...

    async def request(
        self, request: types.ClientRequest, result_type: type[ResultT], timeout: float
    ) -> ResultT: ...
