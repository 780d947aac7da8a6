"""The JSON of the lean lanes (faces/lean.py, downstream/lanes.py): parsed and written by pydantic-core.

Every routed call is parsed twice (the client's request, the downstream's answer) and written
twice. pydantic-core's parser and serializer (Rust, already here under pydantic) take a quarter of
the stdlib's time on these small messages, and the switchboard's time on a call's path is what a
client waits for.

They are the stdlib's equals on everything valid JSON-RPC carries (numbers included: a float reads
and writes back as the same float) but one thing: a lone UTF-16 surrogate escape (`"\\ud800"`),
which the stdlib reads into a `str` that UTF-8 cannot hold. Such a message takes the stdlib both
ways, and is written with ASCII escapes so that it stays valid JSON on the other side.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

# One encoder: `json.dumps` builds a new one per call when given separators.
_ASCII = json.JSONEncoder(separators=(",", ":"))


def loads(line: bytes) -> Any:
    """The JSON value of `line`; ValueError or RecursionError when it is not JSON."""
    try:
        return from_json(line)
    except ValueError:
        return json.loads(line)  # a lone surrogate escape, or not JSON at all (this raises then)


def dumps(message: dict[str, Any]) -> bytes:
    """`message` as one line of compact JSON (no newline)."""
    try:
        return to_json(message, inf_nan_mode="constants")  # NaN stays NaN, as the stdlib writes it
    except PydanticSerializationError:
        return _ASCII.encode(message).encode()
