"""What the switchboard shows Prometheus, and the three probe endpoints (SPEC §12).

`Metrics` is an `Observer` of the board (routing/observers.py): it counts every entry each routed
tools/call tried once the answer is on its way, whichever lane carried the call, and follows each
server's state. `/healthz` answers while the process serves; `/readyz` is 200 only when every
enabled server has had its first verdict and at least one is routable; `/metrics` is the
Prometheus text format. The registry is the board's own (not the process-global one), so two
boards never mix their numbers; only the count of dropped messages (downstream/owners.py) is the
process's, as the downstreams' own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from colibri.serving.bearer import Verify, token_required
from colibri.switchboard.downstream import DROPS
from colibri.switchboard.health import State, Transition
from colibri.switchboard.routing import Answer, Observer, RoutedCall

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

Readiness = Callable[[], tuple[bool, dict[str, Any]]]


class Metrics(Observer):
    """The board's counters, gauges and histogram."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.state = Gauge(
            "colibri_switchboard_server_state",
            "1 for the state each downstream server is in, 0 for the others",
            ["server", "state"],
            registry=self.registry,
        )
        self.transitions = Counter(
            "colibri_switchboard_transitions",
            "State transitions of each downstream server",
            ["server", "source", "target"],
            registry=self.registry,
        )
        self.calls = Counter(
            "colibri_switchboard_calls",
            "Tool calls routed, by server, tool and outcome (ok, tool_error, error, timeout, refused)",
            ["server", "tool", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "colibri_switchboard_call_seconds",
            "Latency of routed tool calls, as the switchboard measured them",
            ["server"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        # How much of the HTTP face's traffic its lean lane answers (post_lane.py), the rest the SDK.
        self.lean_calls = Counter(
            "colibri_switchboard_http_lean_calls",
            "Routed tools/call requests the HTTP face answered on its lean lane, beside the SDK",
            registry=self.registry,
        )
        self.registry.register(_DropsCollector())

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        if call.method != "tools/call":
            return
        for tried in answer.tried:
            self.calls.labels(tried.server, tried.target, tried.outcome).inc()
            self.latency.labels(tried.server).observe(tried.seconds)

    def joined(self, server: str, state: State) -> None:
        self._show(server, state)

    def moved(self, server: str, transition: Transition) -> None:
        self.transitions.labels(server, str(transition.source), str(transition.target)).inc()
        self._show(server, transition.target)

    def left(self, server: str) -> None:
        for state in State:
            self.state.remove(server, str(state))

    def _show(self, server: str, current: State) -> None:
        for state in State:
            self.state.labels(server, str(state)).set(1 if state is current else 0)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _DropsCollector(Collector):
    """Messages of the downstreams dropped because they belong to no single call (SPEC §21)."""

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "switchboard_dropped_messages",
            "Messages of a downstream that belong to no single call in flight, dropped (kind: log, "
            "sampling, elicitation, roots)",
            labels=["server", "kind"],
        )
        for (server, kind), count in sorted(DROPS.counts.items()):
            family.add_metric([server, kind], count)
        yield family


def probe_routes(
    readiness: Readiness, metrics: Metrics, verify: Verify | None = None, challenge: str | None = None
) -> list[Route]:
    """GET /healthz, /readyz (from `readiness`) and /metrics (from `metrics`); with tokens (`verify`
    given) /metrics answers only a valid one: it names the servers and their failures (SPEC §14);
    `challenge` is its 401's `WWW-Authenticate`."""

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        ready, detail = readiness()
        return JSONResponse({"ready": ready, **detail}, status_code=200 if ready else 503)

    async def rendered(request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", token_required(rendered, verify, challenge), methods=["GET"]),
    ]
