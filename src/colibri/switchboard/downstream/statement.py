"""The on-behalf-of statement of the tools/call being sent (SPEC §20), where it is written.

calls.py signs one for a call to a downstream Colibri (routing/vouching.py's `Statements`) and sets
`SENT_META` to its `_meta` entries around the send, in the task (or, on the lean lane, the callback)
that writes the request; the two writers read it there: the SDK's client (transport.py) and the
lean lane's JSON line (lanes.py). So the statement travels with that one request and no other, and
neither writer's signature grows a parameter that only this one kind of downstream uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

SENT_META: ContextVar[Mapping[str, Any] | None] = ContextVar("colibri_switchboard_sent_meta", default=None)
