"""Results of the switchboard's own making: the Colibri envelopes of SPEC §1.6.

Each carries the envelope as `structuredContent` and as one JSON text block. Downstream results
never pass through here: they go back to the client unchanged.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from colibri.core.envelope_text import to_json


def success(data: dict[str, Any]) -> types.CallToolResult:
    return _result({"ok": True, "data": data})


def error(code: str, message: str, **details: Any) -> types.CallToolResult:
    """A Pattern A error: `isError` true, `{"ok": false, "error": {code, message, details}}`."""
    return _result({"ok": False, "error": {"code": code, "message": message, "details": details}})


def _result(envelope: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=to_json(envelope))],
        structured_content=envelope,
        is_error=envelope["ok"] is not True,
    )
