"""One trace spans client → switchboard → `colibri serve` (SPEC §17), as a real OTLP/HTTP receiver
gets it, and both audit rows keep the trace id: the downstream's and the switchboard's (SPEC §15).

The client continues a trace of its own: a `traceparent` in the call's `_meta`. The switchboard's
span continues it and passes its own `traceparent` downstream; `colibri serve`'s span continues
that. Over stdio the call takes the lean lanes (faces/lean.py and downstream/lanes.py); over HTTP
the SDK's.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.tracing.receiver import Received, otel_env, otlp_receiver

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CLIENT_SPAN}-01"


@asynccontextmanager
async def connected(config: Path, transport: str, env: dict[str, str]) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with switchboard(config, mode="auto", env=env) as client:
            yield client
        return
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env={**switchboard_env(), **env}
    )
    try:
        wait_for_port(port, board)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="auto") as client:
            yield client
    finally:
        stop(board)


def one(spans: list[Received], service: str, name: str) -> Received:
    found = [s for s in spans if s.service == service and s.name == name and s.trace_id == TRACE_ID]
    assert len(found) == 1, f"{service} {name}: {found} among {spans}"
    return found[0]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_one_trace_from_the_client_through_the_switchboard_to_colibri_serve(
    tmp_path: Path, transport: str
) -> None:
    with otlp_receiver() as receiver:
        downstreams = Downstreams(tmp_path)
        colibri = downstreams.colibri()
        colibri["env"] |= otel_env(receiver)
        config = write_config(
            tmp_path, {"colibri": colibri}, health={"readiness_s": 60}, audit={"db": "gateway.db"}
        )
        async with connected(config, transport, otel_env(receiver)) as client:
            await wait_for_state(client, "colibri", "HEALTHY", timeout=30)
            listed = await client.call_tool("colibri.task_list", {}, meta={"traceparent": TRACEPARENT})
            assert listed.is_error is not True, listed

        def whole(spans: list[Received]) -> bool:
            names = {(s.service, s.name) for s in spans if s.trace_id == TRACE_ID}
            return {
                ("colibri-switchboard", "tools/call colibri.task_list"),
                ("colibri", "tools/call task_list"),
            } <= names

        spans = receiver.wait_for(whole)
    gateway = one(spans, "colibri-switchboard", "tools/call colibri.task_list")
    sent = one(spans, "colibri-switchboard", "MCP send tools/call task_list")
    served = one(spans, "colibri", "tools/call task_list")
    assert gateway.kind == Span.SPAN_KIND_SERVER and gateway.parent_span_id == CLIENT_SPAN
    assert sent.kind == Span.SPAN_KIND_CLIENT and sent.parent_span_id == gateway.span_id
    assert served.kind == Span.SPAN_KIND_SERVER and served.parent_span_id == sent.span_id
    with sqlite3.connect(tmp_path / "colibri" / "colibri.db") as db:
        rows = db.execute("SELECT trace_id FROM actions WHERE tool = 'task_list'").fetchall()
    assert rows == [(TRACE_ID,)]
    with sqlite3.connect(tmp_path / "gateway.db") as db:
        rows = db.execute("SELECT trace_id, outcome FROM actions WHERE tool = 'colibri.task_list'").fetchall()
    assert rows == [(TRACE_ID, "ok")]


def test_nothing_of_the_tracing_sdk_is_imported_unless_asked(tmp_path: Path) -> None:
    """SPEC §18: `colibri serve` starts without opentelemetry-sdk or the exporter when no OTEL_*
    variable asks for tracing (the SDK's own opentelemetry-api is loaded, a no-op)."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['colibri', 'tools']\n"
        "from colibri import cli\n"
        "from colibri.runtime import server\n"
        "from colibri.switchboard.program import serve\n"
        "loaded = [m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))]\n"
        "print(loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout
