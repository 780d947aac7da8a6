"""`colibri serve --http` traces as `colibri serve` on stdio does (SPEC §17): with the standard
OTEL_* variables set, a call over Streamable HTTP is a span a real OTLP/HTTP receiver gets, a
`traceparent` in the request's `_meta` is continued, and the call's `actions` row keeps the trace id.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.helpers import query
from tests.http.helpers import http_client, http_env, running
from tests.tracing.receiver import Received, otel_env, otlp_receiver

pytestmark = pytest.mark.anyio

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CLIENT_SPAN = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{CLIENT_SPAN}-01"


def _served(spans: list[Received], name: str) -> list[Received]:
    return [s for s in spans if s.service == "colibri" and s.name == name]


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_call_over_http_is_a_span_that_continues_the_callers_trace(tmp_path: Path, era: str) -> None:
    with otlp_receiver() as receiver:
        env = http_env(tmp_path, **otel_env(receiver))
        with running(env, tmp_path, "--no-auth") as server:
            async with http_client(server.url, None, mode=era) as client:
                continued = await client.call_tool("task_list", {}, meta={"traceparent": TRACEPARENT})
                assert continued.is_error is not True, continued
                own = await client.call_tool("server_health", {})
                assert own.is_error is not True, own

            def both(spans: list[Received]) -> bool:
                return bool(
                    _served(spans, "tools/call task_list") and _served(spans, "tools/call server_health")
                )

            spans = receiver.wait_for(both)
    [listed] = _served(spans, "tools/call task_list")
    [health] = _served(spans, "tools/call server_health")
    assert listed.kind == Span.SPAN_KIND_SERVER
    assert (listed.trace_id, listed.parent_span_id) == (TRACE_ID, CLIENT_SPAN)
    # Without a traceparent the call is the root of a trace of its own.
    assert health.trace_id not in ("", TRACE_ID) and health.parent_span_id == ""
    rows = query(tmp_path / "colibri.db", "SELECT tool, trace_id FROM actions ORDER BY sequence_no")
    traced = {row["tool"]: row["trace_id"] for row in rows}
    assert traced["task_list"] == TRACE_ID
    assert traced["server_health"] == health.trace_id
