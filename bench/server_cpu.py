"""A server's CPU per call over Streamable HTTP, read from /proc (SPEC §25: CPU per call is the budget).

`tree_cpu_seconds(pid)` is the user and system time of a process and all its descendants, every thread
included (/proc/PID/stat counts a process's threads, those that ended too). `cpu_per_call` opens
`clients` MCP sessions with plain HTTP requests (no SDK client: the measuring process competes for
the same 2 cores, so the lighter it is the steadier the server's figure), warms each up, then reads
the server's CPU time around a window of `calls` calls shared among the clients.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2

from bench.procs import tree_cpu_seconds

VERSION = "2025-11-25"
WARM_UP = 20  # calls per client before the window
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class _Session:
    """One MCP session (the initialize handshake) over its own keep-alive connection."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.headers: dict[str, str] = {}

    async def request(self, method: str, params: dict[str, Any], *, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            message["id"] = 1
        answer = await self.http.post(self.url, headers=self.headers, content=json.dumps(message))
        if answer.status_code >= 300:
            raise RuntimeError(f"{method} answered {answer.status_code}: {answer.text[:300]}")
        if notify:
            return None
        body = answer.json()
        if "error" in body or body["result"].get("isError"):
            raise RuntimeError(f"{method} failed during the benchmark: {answer.text[:300]}")
        if method == "initialize":
            self.headers = {
                "mcp-session-id": answer.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
        return body["result"]


async def _arguments(session: _Session, tool: str, index: int) -> dict[str, Any]:
    if tool == "thought_record":
        started = await session.request(
            "tools/call", {"name": "audit_session_start", "arguments": {"agent_id": f"bench-{index}"}}
        )
        session_id = started["structuredContent"]["data"]["session_id"]
        return {"session_id": session_id, "kind": "observation", "content": "x"}
    return {"n": index} if tool == "echo" else {}


async def cpu_per_call(
    url: str, token: str | None, tool: str, pid: int, *, calls: int, clients: int
) -> float:
    """Seconds of the server's CPU per call of `tool`, over a window of `calls` calls made by
    `clients` concurrent sessions, after each has made WARM_UP calls. Each session ends (DELETE)
    after the window, so that rounds never pile up sessions against the per-token cap."""
    headers = dict(_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {}))
    left, ready, finished = calls, 0, 0
    spent: list[float] = []
    everyone_ready, window_open, window_closed = anyio.Event(), anyio.Event(), anyio.Event()

    async def client(index: int) -> None:
        nonlocal left, ready, finished
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            session = _Session(http, url)
            await session.request(
                "initialize",
                {
                    "protocolVersion": VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            )
            await session.request("notifications/initialized", {}, notify=True)
            params = {"name": tool, "arguments": await _arguments(session, tool, index)}
            for _ in range(WARM_UP):
                await session.request("tools/call", params)
            ready += 1
            if ready == clients:
                everyone_ready.set()
            await window_open.wait()
            while left > 0:
                left -= 1
                await session.request("tools/call", params)
            finished += 1
            if finished == clients:
                spent.append(tree_cpu_seconds(pid))
                window_closed.set()
            await window_closed.wait()
            await http.delete(url, headers=session.headers)

    async with anyio.create_task_group() as tasks:
        for index in range(clients):
            tasks.start_soon(client, index)
        await everyone_ready.wait()
        before = tree_cpu_seconds(pid)
        window_open.set()
    return (spent[0] - before) / calls
