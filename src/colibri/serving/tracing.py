"""OpenTelemetry tracing for both programs, on only when the standard `OTEL_*` variables ask (SPEC §17).

The MCP SDK already makes a span of every message it serves (its `OpenTelemetryMiddleware`, which
continues a `traceparent` found in the request's `_meta`) and of every request its client sends
(injecting the `traceparent` it goes on with), through `opentelemetry-api`: a no-op until a tracer
provider is set. `traced(service)` sets one, importing `opentelemetry-sdk` and the OTLP/HTTP exporter
only then (SPEC §18: nothing is imported before it is needed), when

- `OTEL_TRACES_EXPORTER` is `otlp` (or `console`, spans as JSON on stderr: stdout is the wire), or
- it is unset and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` names a receiver;

never with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The exporter and the SDK read
every other standard variable themselves (endpoint, headers, timeout, `OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`). Only OTLP over HTTP (protobuf) is
shipped: `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` is refused, as is an exporter name it does not know
(`ConfigError`: one line, exit 2). Spans still batched at the end are sent before the process exits.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from colibri.core import traces
from colibri.core.env import ConfigError

log = logging.getLogger("colibri")

EXPORTERS = ["otlp", "console", "none"]
PROTOCOLS = ["http/protobuf"]


def exporter_asked(env: Mapping[str, str]) -> str | None:
    """The span exporter the environment asks for (`otlp` or `console`), or None for no tracing."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    raw = env.get("OTEL_TRACES_EXPORTER", "").strip()
    if not raw:
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        return "otlp" if endpoint else None
    exporter = raw.split(",")[0].strip().lower()
    if exporter not in EXPORTERS:
        raise ConfigError("OTEL_TRACES_EXPORTER", raw, EXPORTERS)
    if exporter == "none":
        return None
    for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = env.get(variable, "").strip()
        if protocol and exporter == "otlp" and protocol not in PROTOCOLS:
            raise ConfigError(variable, protocol, PROTOCOLS)
    return exporter


def check(env: Mapping[str, str] = os.environ) -> None:
    """Raise `ConfigError` now for `OTEL_*` values `traced` would refuse (before anything starts)."""
    exporter_asked(env)


@contextmanager
def traced(service: str, env: Mapping[str, str] = os.environ) -> Iterator[None]:
    """Trace inside this block when the environment asks (`service` is the default service name)."""
    exporter = exporter_asked(env)
    if exporter is None:
        yield
        return
    provider = _provider(service, exporter, env)
    traces.enable()
    log.info("tracing: spans go to the %s exporter", exporter)
    try:
        yield
    finally:
        provider.shutdown()  # sends the spans still batched


def _provider(service: str, exporter: str, env: Mapping[str, str]) -> Any:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {SERVICE_NAME: service}))
    spans: SpanExporter
    if exporter == "console":
        import sys

        spans = ConsoleSpanExporter(out=sys.stderr)
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        spans = OTLPSpanExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    return provider


def sdk_middleware(default: list[Any]) -> list[Any]:
    """The SDK server's default middleware (its OpenTelemetry span per message) when tracing is on;
    none otherwise, where it would cost every message for nothing."""
    return list(default) if traces.enabled() else []
