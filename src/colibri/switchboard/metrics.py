"""What the switchboard shows Prometheus, and the three probe endpoints (SPEC §12).

`/healthz` answers while the process serves; `/readyz` is 200 only when every enabled server has
had its first verdict and at least one is routable; `/metrics` is the Prometheus text format. The
registry is the board's own (not the process-global one), so two boards never mix their numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from colibri.switchboard.states import State, Transition

if TYPE_CHECKING:
    from colibri.switchboard.gateway import Switchboard

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class Metrics:
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

    def show_state(self, server: str, current: State) -> None:
        for state in State:
            self.state.labels(server, str(state)).set(1 if state is current else 0)

    def transition(self, server: str, transition: Transition) -> None:
        self.transitions.labels(server, str(transition.source), str(transition.target)).inc()
        self.show_state(server, transition.target)

    def forget(self, server: str) -> None:
        for state in State:
            self.state.remove(server, str(state))

    def call(self, server: str, tool: str, outcome: str, seconds: float) -> None:
        self.calls.labels(server, tool, outcome).inc()
        self.latency.labels(server).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def routes(board: Switchboard) -> list[Route]:
    """GET /healthz, /readyz and /metrics for `board`."""

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        ready, detail = board.readiness()
        return JSONResponse({"ready": ready, **detail}, status_code=200 if ready else 503)

    async def metrics(request: Request) -> Response:
        return Response(board.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]


def readiness(settled: dict[str, bool], routable: dict[str, bool]) -> tuple[bool, dict[str, Any]]:
    """Ready: every enabled server has had a verdict and at least one is routable."""
    waiting = sorted(name for name, done in settled.items() if not done)
    ready = not waiting and any(routable.values())
    return ready, {
        "waiting_for_first_verdict": waiting,
        "routable": sorted(n for n, r in routable.items() if r),
    }
