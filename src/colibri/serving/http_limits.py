"""Bounds on an HTTP face (serving/http.py): sessions it keeps, bodies it reads, sockets it waits on.

- Stateful sessions are closed after `session_idle_s` without a request and capped at
  `max_sessions` (the SDK's defaults, 30 min and 10,000, hold about 400 MB of idle state), and at
  `max_sessions_per_principal` for one token, so one token cannot lock the others out.
- A request body is capped before it is read: `max_body_bytes` at `/mcp`, `max_form_bytes` on
  every other path (forms, probes); beyond it the answer is 413. The whole body must arrive
  within `body_timeout_s` of the headers, else 408 (guards/body.py).
- A connection that has not finished sending a request's headers within `header_timeout_s`
  (a slow-loris client, or one that connects and says nothing) is closed; uvicorn by itself only
  times out idle keep-alive connections between requests. `max_connections` caps open
  connections (uvicorn answers 503 beyond it).

Each is set by a `COLIBRI_HTTP_*` variable, read once at the entry point of the program that
serves HTTP (cli/serve_http.py, cli/ui.py, switchboard/cli.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the protocol classes load with the stack that serving/http.py chooses
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

P = TypeVar("P", "H11Protocol", "HttpToolsProtocol")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    session_idle_s: float = 600.0
    max_sessions: int = 256
    header_timeout_s: float = 10.0
    max_connections: int = 512
    max_sessions_per_principal: int = 32
    max_body_bytes: int = 4 * 1024 * 1024
    max_form_bytes: int = 16 * 1024
    body_timeout_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> HttpLimits:
        """ValueError naming the variable when one is set to something unusable."""
        defaults = cls()
        return cls(
            session_idle_s=_positive(env, "COLIBRI_HTTP_SESSION_IDLE_S", defaults.session_idle_s),
            max_sessions=_whole(env, "COLIBRI_HTTP_MAX_SESSIONS", defaults.max_sessions),
            header_timeout_s=_positive(env, "COLIBRI_HTTP_HEADER_TIMEOUT_S", defaults.header_timeout_s),
            max_connections=_whole(env, "COLIBRI_HTTP_MAX_CONNECTIONS", defaults.max_connections),
            max_sessions_per_principal=_whole(
                env, "COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL", defaults.max_sessions_per_principal
            ),
            max_body_bytes=_whole(env, "COLIBRI_HTTP_MAX_BODY_BYTES", defaults.max_body_bytes),
            max_form_bytes=_whole(env, "COLIBRI_HTTP_MAX_FORM_BYTES", defaults.max_form_bytes),
            body_timeout_s=_positive(env, "COLIBRI_HTTP_BODY_TIMEOUT_S", defaults.body_timeout_s),
        )


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    return int(_positive(env, name, default, whole=True))


def _positive(env: Mapping[str, str], name: str, default: float, *, whole: bool = False) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        value = 0
    if not 0 < value < 10**9:
        kind = "a whole number" if whole else "a number of seconds"
        raise ValueError(f"{name}={raw!r} is not valid; use {kind} greater than 0")
    return value


def timed_protocol(base: type[P], header_timeout_s: float) -> type[P]:
    """uvicorn's protocol `base` (h11 or httptools: both keep the request in flight as `cycle`),
    closing connections whose request headers do not arrive in time."""

    class HeaderTimed(base):  # type: ignore[valid-type,misc]
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # the headers are in: the request is the application's now

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderTimed
