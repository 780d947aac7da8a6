"""The OpenTelemetry trace a call belongs to, read from the current context.

The MCP SDK depends on `opentelemetry-api`, which is a no-op until a tracer provider is set
(`serving/tracing.py` sets one when the `OTEL_*` variables ask for it). `enabled()` says whether one
is, so the per-call work of tracing (spans of our own lanes) is skipped entirely when it is not.
"""

from __future__ import annotations

from opentelemetry import trace

_enabled = [False]


def enable() -> None:
    """Tracing is on for the rest of this process (a tracer provider is set)."""
    _enabled[0] = True


def enabled() -> bool:
    return _enabled[0]


def current_trace_id() -> str | None:
    """The W3C trace id (32 hex digits) of the span now current, or None outside any trace."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
