"""The switchboard's vocabulary, used by every other part: its errors, the promises between its parts,
its own envelopes and the JSON of the lean lanes. It imports no other part of the switchboard.

errors.py      the error tree (config, health, downstream) and the Pattern A codes of its own refusals
contracts.py   what a downstream connection and the client request it serves promise each other
envelopes.py   results of the switchboard's own making (SPEC §1.6), fitted to a tool's output schema
jsonlines.py   JSON parsed and written by pydantic-core, for the lean lanes
spans.py       the lean lanes' OpenTelemetry spans (while tracing is on)
failures.py    a downstream failure (often an exception group) said in one line
"""

from colibri.switchboard.base import envelopes, jsonlines, spans
from colibri.switchboard.base.contracts import (
    Abandon,
    Caller,
    Done,
    DownstreamSession,
    Hooks,
    Notified,
    Notify,
    Progress,
    Relay,
    ResultT,
    Vouch,
)
from colibri.switchboard.base.errors import (
    HANDLER_ERROR,
    INVALID_PARAMS,
    RATE_LIMITED,
    SERVICE_UNAVAILABLE,
    TOOL_CHANGED,
    TOOL_NOT_ADMITTED,
    UNKNOWN_TOOL,
    UPSTREAM_ERROR,
    UPSTREAM_TIMEOUT,
    CallTimedOut,
    ConfigError,
    ConnectFailed,
    ConnectionLost,
    DownstreamError,
    IllegalTransition,
    MalformedResult,
    NotSent,
    PeerError,
    SwitchboardError,
    json_path,
    refusal_reason,
)
from colibri.switchboard.base.failures import (
    describe_connect_error,
    describe_failure,
    first_line,
    hide,
    leaves,
)

__all__ = [
    "HANDLER_ERROR",
    "INVALID_PARAMS",
    "RATE_LIMITED",
    "SERVICE_UNAVAILABLE",
    "TOOL_CHANGED",
    "TOOL_NOT_ADMITTED",
    "UNKNOWN_TOOL",
    "UPSTREAM_ERROR",
    "UPSTREAM_TIMEOUT",
    "Abandon",
    "CallTimedOut",
    "Caller",
    "ConfigError",
    "ConnectFailed",
    "ConnectionLost",
    "Done",
    "DownstreamError",
    "DownstreamSession",
    "Hooks",
    "IllegalTransition",
    "MalformedResult",
    "NotSent",
    "Notified",
    "Notify",
    "PeerError",
    "Progress",
    "Relay",
    "ResultT",
    "SwitchboardError",
    "Vouch",
    "describe_connect_error",
    "describe_failure",
    "envelopes",
    "first_line",
    "hide",
    "json_path",
    "jsonlines",
    "leaves",
    "refusal_reason",
    "spans",
]
