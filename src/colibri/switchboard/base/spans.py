"""The spans of the lean lanes, which carry tools/call beside the SDK and so beside its spans (SPEC §17).

The lane facing a client (faces/lean.py) opens the SERVER span the SDK's middleware opens for a
call it serves (same name and attributes, continuing a `traceparent` found in the request's `_meta`);
the lane to a downstream (downstream/lanes.py) opens the CLIENT span the SDK's client opens for a
request it sends, and writes its `traceparent` into that request's `_meta`, so the downstream's own
spans join the trace. Nothing at all is done while tracing is off (`core.traces.enabled()`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from colibri.core import traces

_tracer = trace.get_tracer("colibri.switchboard")


def serving(tool: str, meta: Mapping[str, Any] | None, protocol_version: str | None) -> Span | None:
    """The span of a call the client lane serves, or None while tracing is off."""
    if not traces.enabled():
        return None
    parent = propagate.extract(meta) if meta else None
    if parent is not None and not trace.get_current_span(parent).get_span_context().is_valid:
        parent = None  # no usable traceparent: the span starts a trace of its own
    attributes = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
    }
    if protocol_version is not None:
        attributes["mcp.protocol.version"] = protocol_version
    return _tracer.start_span(
        f"tools/call {tool}", kind=SpanKind.SERVER, context=parent, attributes=attributes
    )


def sending(tool: str, meta: dict[str, Any]) -> Span | None:
    """The span of a tools/call the downstream lane sends, its `traceparent` written into `meta`."""
    if not traces.enabled():
        return None
    span = _tracer.start_span(
        f"MCP send tools/call {tool}", kind=SpanKind.CLIENT, attributes={"mcp.method.name": "tools/call"}
    )
    propagate.inject(meta, context=trace.set_span_in_context(span))
    return span


@contextmanager
def current(span: Span | None) -> Iterator[None]:
    """`span` is the current one inside this block (what is sent from there joins its trace)."""
    if span is None:
        yield
        return
    with trace.use_span(span, end_on_exit=False):
        yield


def end(span: Span | None, error: str | None = None) -> None:
    """End `span`, marked as failed with `error` when there is one."""
    if span is None:
        return
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(StatusCode.ERROR)
    span.end()
