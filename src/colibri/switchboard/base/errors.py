"""Errors of the switchboard, and the Pattern A codes its own refusals carry.

SwitchboardError
├── ConfigError           the config file is unusable (exit 2, names the JSON path)
├── IllegalTransition     a state-machine move the table does not allow
└── DownstreamError       talking to one downstream went wrong (converted at the SDK edge)
    ├── ConnectFailed     the process or connection could not be started or handshaken
    ├── NotSent           the request never left: no connection, or it was already closed
    ├── CallTimedOut      no answer within the timeout after the request was sent
    ├── ConnectionLost    the connection ended while the request was in flight
    ├── MalformedResult   the answer does not parse as a result, or breaks the tool's output schema
    └── PeerError         the downstream answered with a JSON-RPC error (passed through unchanged)

The switchboard's refusals are Pattern A errors (an envelope, or a JSON-RPC error whose message
starts `CODE: `), each with its reason (core/reasons.py), which the audit row records:
`refusal_reason` says which, for every code, in this one table (`REFUSALS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from colibri.core import reasons

SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
UNKNOWN_TOOL = "UNKNOWN_TOOL"
UPSTREAM_TIMEOUT = "UPSTREAM_TIMEOUT"
UPSTREAM_ERROR = "UPSTREAM_ERROR"
HANDLER_ERROR = "HANDLER_ERROR"
INVALID_PARAMS = "INVALID_PARAMS"
RATE_LIMITED = "RATE_LIMITED"
TOOL_NOT_ADMITTED = "TOOL_NOT_ADMITTED"
TOOL_CHANGED = "TOOL_CHANGED"
APPROVAL_DENIED = "APPROVAL_DENIED"
APPROVAL_PENDING = "APPROVAL_PENDING"
APPROVAL_REQUIRED = "APPROVAL_REQUIRED"

# JSON-RPC codes that blame the request, not the server: answering them proves the server is alive.
CLIENT_FAULT_CODES = frozenset({-32700, -32600, -32601, -32602})


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def json_path(loc: tuple[Any, ...]) -> str:
    """A JSON path such as `mcpServers.search-a.health.liveness_s` or `fallbacks.search[1]`."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            path += f".{part}" if path else part
        else:
            path += f"[{json.dumps(part)}]"
    return path or "$"


def _policy(details: Mapping[str, Any]) -> str:
    # `auth.policies.ana` (policy.py's detail) is the policy named `ana`
    named = str(details.get("policy") or "?")
    return reasons.policy(named.removeprefix("auth.policies."))


def _unavailable(details: Mapping[str, Any]) -> str:
    # the first entry's kind of trouble (routing/failures.py's `why`): unhealthy, quarantine, removed, ...
    listed = details.get("reasons")
    first = listed[0] if isinstance(listed, list) and listed and isinstance(listed[0], dict) else {}
    return reasons.unavailable(str(details.get("why") or first.get("why") or "unavailable"))


# Each refusal's code, and the reason its row records (from the refusal's details where it names one).
REFUSALS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    RATE_LIMITED: lambda _: reasons.RATE_LIMIT,
    TOOL_NOT_ADMITTED: _policy,
    TOOL_CHANGED: lambda _: reasons.WITHHELD,
    UNKNOWN_TOOL: lambda _: reasons.UNKNOWN_TOOL,
    APPROVAL_DENIED: lambda _: reasons.APPROVAL_DENIED,
    APPROVAL_PENDING: lambda _: reasons.APPROVAL_PENDING,
    APPROVAL_REQUIRED: lambda _: reasons.APPROVAL_REQUIRED,
    SERVICE_UNAVAILABLE: _unavailable,
}


def refusal_reason(code: str, details: Mapping[str, Any] | None) -> str | None:
    """The reason a refusal with this code records (a `reason` in its details wins); None when the
    code is not one of the switchboard's refusals."""
    derive = REFUSALS.get(code)
    if derive is None:
        return None
    details = details or {}
    named = details.get("reason")
    return named if isinstance(named, str) and named else derive(details)


class SwitchboardError(Exception):
    """Base of every error the switchboard raises on purpose."""


class ConfigError(SwitchboardError):
    """The config file is unusable; `path` is the JSON path of the problem."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class IllegalTransition(SwitchboardError):
    """The state machine was asked for a move its table does not hold."""

    def __init__(self, state: str, action: str, legal: list[str]) -> None:
        super().__init__(
            f"cannot {action} in state {state}; legal in {state}: {', '.join(legal) or 'nothing'}"
        )


class DownstreamError(SwitchboardError):
    """Talking to a downstream failed; `sent` says whether the request may have reached it."""

    sent = True
    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConnectFailed(DownstreamError):
    """The process or connection could not be started or completed its handshake."""

    sent = False
    kind = "failed connection"


class NotSent(DownstreamError):
    """The request never left: there was no open connection."""

    sent = False
    kind = "lost connection"


class CallTimedOut(DownstreamError):
    """The request was sent and no answer came within the timeout."""

    kind = "timeout"


class ConnectionLost(DownstreamError):
    """The connection ended while the request was in flight."""

    kind = "lost connection"


class MalformedResult(DownstreamError):
    """The answer is not a valid result, or its structured content breaks the tool's output schema."""

    kind = "malformed result"


class PeerError(DownstreamError):
    """The downstream answered with a JSON-RPC error; it is passed through unchanged."""

    kind = "error"

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.rpc_message = message
        self.data = data

    @property
    def blames_server(self) -> bool:
        """Whether the error says the server failed (not that the request was wrong)."""
        return self.code not in CLIENT_FAULT_CODES
