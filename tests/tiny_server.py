"""The smallest MCP server that will do as a switchboard downstream: stdlib only, so it starts in
milliseconds (the SDK costs about a second of CPU to import). Handshake era only: anything it does
not know, `server/discover` included, gets "method not found", which sends clients to `initialize`.

Tools: `server_ping` → {"pong": true} (structured and as text).
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {
        "name": "server_ping",
        "description": "Answers pong.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object", "properties": {"pong": {"type": "boolean"}}, "required": ["pong"]},
    }
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and params.get("name") == "server_ping":
        return {"content": [{"type": "text", "text": '{"pong": true}'}], "structuredContent": {"pong": True}}
    raise LookupError(method)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications and answers need no reply
        try:
            reply: dict[str, Any] = {"result": answer(message["method"], message.get("params") or {})}
        except LookupError as exc:
            reply = {"error": {"code": -32601, "message": f"Method not found: {exc}"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
