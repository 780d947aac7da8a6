"""A one-shot client: start `colibri serve` with this environment, call one tool, return the envelope."""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp import Client, StdioServerParameters


def server_parameters(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "colibri", "serve"],
        env=dict(os.environ) if env is None else env,
    )


async def call_once(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(server_parameters()) as client:
        await client.list_tools()  # returns once the server's phase 2 is over, so the call sees it booted
        result = await client.call_tool(tool, arguments)
    envelope = result.structured_content
    if not isinstance(envelope, dict):
        return {
            "ok": False,
            "error": {
                "code": "NO_ENVELOPE",
                "message": "the server returned no envelope",
                "details": {"content": [c.model_dump() for c in result.content]},
            },
        }
    return envelope
