"""The JSON-RPC edge: what a client sends either reaches the SDK as a message or is answered here.

The SDK drops whatever its message model rejects (it logs the error and sends nothing), so a
client that sent a malformed request would wait forever. JSON-RPC 2.0 §5 says what to answer
instead, and `judge` does: every line is a `SessionMessage` for the SDK, an error response to
write back, or (for a client's malformed response or notification-shaped noise that no one
waits on) nothing at all.

- unparseable input (not UTF-8, not JSON, NaN, nesting beyond the parser) → -32700, id null;
- not a request object (a batch, an id that is not a string or an integer, `jsonrpc` other than
  "2.0", a method that is not a string, params that are not an object) → -32600, with the id
  when it is a valid one, else null;
- a well-formed request whose params the SDK cannot take (a lone surrogate in a string, nesting
  deeper than its parser allows) → -32602 with its id;
- a notification, or a response from the client, is never answered.

The well-formed path costs what it cost before: one pydantic parse. The slower checks run only
for lines that failed it, and for notifications (rare: initialized, cancelled, progress).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger("colibri.edge")

PARSE_ERROR = types.PARSE_ERROR
INVALID_REQUEST = types.INVALID_REQUEST
INVALID_PARAMS = types.INVALID_PARAMS

# The SDK's JSON parser (jiter) stops at 200 levels, the envelope takes two of them.
SDK_MAX_DEPTH = 200


def error(request_id: int | str | None, code: int, message: str) -> SessionMessage:
    """An error response, ready for the write stream."""
    body = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=body))


def oversize(limit: int) -> SessionMessage:
    return error(
        None,
        INVALID_REQUEST,
        f"Invalid Request: the message is longer than the limit of {limit:,} bytes "
        "(COLIBRI_MAX_MESSAGE_BYTES); it was discarded unread - send smaller messages",
    )


def judge(line: bytes) -> tuple[SessionMessage | None, SessionMessage | None]:
    """(message for the SDK, answer for the client): at most one of them is set."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None, _answer_rejected(line)
    if isinstance(message, types.JSONRPCNotification):
        # The model ignores unknown keys, so a request whose id is null, a float or a bool
        # reads as a notification; the raw object says which it was.
        raw = _loads(line)
        if isinstance(raw, dict) and "id" in raw:
            return None, error(None, INVALID_REQUEST, _bad_id(raw["id"]))
    return SessionMessage(message), None


def _answer_rejected(line: bytes) -> SessionMessage | None:
    """Why the SDK's model refused `line`, as the error JSON-RPC prescribes (None: say nothing)."""
    try:
        raw = _loads(line)
    except (ValueError, RecursionError) as exc:
        return error(None, PARSE_ERROR, f"Parse error: the message is not valid JSON ({_why(exc)})")
    if isinstance(raw, list):
        return error(
            None,
            INVALID_REQUEST,
            "Invalid Request: batches (JSON arrays) are not part of MCP; send one JSON object per line",
        )
    if not isinstance(raw, dict):
        return error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    request_id = raw.get("id")
    valid_id = _valid_id(request_id)
    if "method" not in raw and ("result" in raw or "error" in raw):
        log.warning("dropped a malformed response from the client (id %r); it gets no answer", request_id)
        return None
    problem = _envelope_problem(raw)
    if "id" in raw and not valid_id:
        problem = problem or _bad_id(request_id)
    answer_id = request_id if valid_id else None
    if problem is not None:
        return error(answer_id, INVALID_REQUEST, f"Invalid Request: {problem}")
    if "id" not in raw:
        log.warning("dropped a notification the SDK could not read: %s", raw.get("method"))
        return None
    return error(answer_id, INVALID_PARAMS, f"Invalid params: {_params_problem(raw.get('params'))}")


def _envelope_problem(raw: dict[str, Any]) -> str | None:
    if raw.get("jsonrpc") != "2.0":
        return f'"jsonrpc" must be "2.0", got {_shown(raw.get("jsonrpc"))}'
    if "method" not in raw:
        return 'a request needs a "method" (and a response a "result" or an "error")'
    if not isinstance(raw["method"], str):
        return f'"method" must be a string, got {_kind(raw["method"])}'
    if "params" in raw and raw["params"] is not None and not isinstance(raw["params"], dict):
        return f'"params" must be an object, got {_kind(raw["params"])}'
    return None


def _params_problem(params: object) -> str:
    depth, surrogate = _scan(params)
    if surrogate:
        return "a string holds a lone UTF-16 surrogate (such as \\ud800), not Unicode; send valid text"
    if depth >= SDK_MAX_DEPTH - 2:
        return f"params nest {depth} levels deep; at most {SDK_MAX_DEPTH - 3} levels are accepted"
    return "the params do not form a valid message"


def _scan(value: object) -> tuple[int, bool]:
    """(deepest nesting, whether any string or key holds a lone surrogate), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return depth, True
        elif isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and not _encodable(key):
                    return depth, True
                stack.append((child, depth + 1))
    return deepest, False


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _loads(line: bytes) -> Any:
    text = line.decode()  # UnicodeDecodeError is a ValueError
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _bad_id(value: object) -> str:
    return f'"id" must be a string or an integer, got {_kind(value)}'


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", float: "a fraction"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _shown(value: object) -> str:
    return "nothing" if value is None else json.dumps(value)[:40]


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it nests too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8"
    return str(exc).split(":")[0]
