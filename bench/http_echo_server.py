"""The HTTP baseline: the bare SDK echo server (echo_server.py's tool) as the SDK's own Streamable
HTTP app under uvicorn. No chain, no database, no authentication. It answers each POST with one
JSON body, as `colibri serve --http` does (runtime/http.py), so that both pay the same transport.

Usage: python bench/http_echo_server.py PORT
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.lowlevel import Server

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.echo_server import call_tool, list_tools

if __name__ == "__main__":
    server: Server[Any] = Server("echo", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host="127.0.0.1", json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
