"""One agent on a shared board (SPEC §24), a real SDK client over HTTP: it claims with
task_next_actions(claim=true), writes back, moves the task to review and to done, each write
fenced by its lease_token, until no open task is left. Each step is one JSON line on stdout.

Run as a process of its own (`python -m tests.domains.tasks.claim_agent URL TOKEN MODE LEASE_S`) so
that a test can SIGKILL or SIGSTOP it, or in-process through `work`. Modes:

  auto   loop until the board has no open task
  hold   claim one task and keep it without a word, until killed
  pause  claim one task, then wait for a line on stdin, then write to it with its lease_token
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

Emit = Callable[[dict[str, Any]], None]
RETRY_S = 0.2  # nothing claimable yet (dependencies, leases running): ask again this much later


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    while True:
        result = await client.call_tool(tool, arguments)
        envelope = result.structured_content
        assert isinstance(envelope, dict), (tool, arguments, result)
        if envelope.get("ok") is True:
            return envelope["data"]
        # Nothing was written (the store stayed locked past the wait, say): the answer says retry.
        assert envelope["error"].get("details", {}).get("retryable") is True, (tool, arguments, envelope)
        await anyio.sleep(RETRY_S)


def _refusal(data: Any) -> str | None:
    return data["error"]["code"] if isinstance(data, dict) and data.get("ok") is False else None


async def work(url: str, token: str, mode: str, lease_s: int, emit: Emit) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client,
    ):
        session = (await _call(client, "audit_session_start", {"agent_id": "claim-agent"}))["session_id"]
        while True:
            answer = await _call(client, "task_next_actions", {"claim": True, "lease_s": lease_s})
            if not answer["actions"]:
                if "no open tasks" in answer["reason"]:
                    emit({"event": "finished"})
                    return
                await anyio.sleep(RETRY_S)
                continue
            (action,) = answer["actions"]
            task = action["task"]
            task_id, fence = task["id"], task["lease"]["token"]
            emit({"event": "claimed", "task": task_id, "action": action["action"], "token": fence})
            if mode == "hold":
                await anyio.sleep_forever()
            if mode == "pause":
                await anyio.to_thread.run_sync(sys.stdin.readline)
                late = {"task_id": task_id, "status": "review", "lease_token": fence}
                data = await _call(client, "task_update", late)
                emit({"event": "late_write", "task": task_id, "code": _refusal(data)})
                return
            record = {"session_id": session, "kind": "writeback", "task_id": task_id, "content": "done"}
            await _call(client, "thought_record", record)
            for status in ("review", "done"):
                data = await _call(
                    client, "task_update", {"task_id": task_id, "status": status, "lease_token": fence}
                )
                code = _refusal(data)
                if code is not None:  # taken over meanwhile: the task is someone else's now
                    emit({"event": "lost", "task": task_id, "code": code})
                    break
            else:
                emit({"event": "done", "task": task_id})


def _print(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


if __name__ == "__main__":
    url, token, mode, lease_s = sys.argv[1:5]
    anyio.run(work, url, token, mode, int(lease_s), _print)
