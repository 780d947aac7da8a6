"""Running the switchboard: the board, its reloads and its faces together, over stdio or HTTP.

The observers every routed call passes are composed here, once (`observers`), in the order each is
asked: how often, who may call what, a changed tool withheld, the audit row (SPEC §15), metrics.
With an audit store its duties run beside the board, and it is closed (its shutdown checkpoint
made) after the last answer.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from starlette.applications import Starlette

from colibri import __version__
from colibri.serving.guards import guarded
from colibri.serving.hosts import AllowedHosts
from colibri.serving.http import run_http, web_server
from colibri.serving.listen import listen
from colibri.serving.sessions import cap_sessions
from colibri.serving.signals import DRAIN_GRACE_S
from colibri.serving.stdio import run_stdio
from colibri.switchboard.audit import Approvals, Audit, AuditStore, Pins
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.faces import (
    SERVER_NAME,
    ClientLane,
    FaceAuth,
    JsonAnswers,
    Metrics,
    Serving,
    build_server,
    lane_in_front,
    probe_routes,
    status_page,
)
from colibri.switchboard.program.reload import Unlisted, watch
from colibri.switchboard.routing import IdentityGate, Limiter, Observer, Policies, Switchboard

log = logging.getLogger("colibri.switchboard")


@dataclass(slots=True)
class Gateway:
    """The board and what observes it: its metrics, and with an audit store, the store and pins."""

    board: Switchboard
    metrics: Metrics
    store: AuditStore | None = None
    pins: Pins | None = None

    @asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """The store's duties while serving inside; the store closed after (its last rows, then the
        shutdown checkpoint), however the block ends."""
        if self.store is None:
            yield
            return
        try:
            async with anyio.create_task_group() as duties:
                duties.start_soon(self.store.keep)
                if self.pins is not None:
                    duties.start_soon(self.pins.follow)
                yield
                duties.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.store.close()


def observers(
    config: SwitchboardConfig,
    metrics: Metrics,
    audit: Audit | None,
    pins: Pins | None,
    approvals: Approvals | None = None,
) -> list[Observer]:
    """Every observer of the routed calls, in the order each is asked (the first refusal wins)."""
    # The rate limit first: a call any other observer refuses has cost its caller (SPEC §21).
    # An exchange server's gate before the pins and the audit: its refusal opens no running row.
    chosen: list[Observer] = [Limiter(config), Policies(config), IdentityGate(config)]
    if pins is not None:
        chosen.append(pins)
    if approvals is not None:  # after every refusal: only a call that would go is held (SPEC §22)
        chosen.append(approvals)
    if audit is not None:
        chosen.append(audit)
    # Unlisted sees only the tools listed (no hook on a call's path), so it costs calls nothing.
    return [*chosen, metrics, Unlisted(config)]


def board_for(config: SwitchboardConfig, store: AuditStore | None = None, config_path: str = "") -> Gateway:
    metrics = Metrics()
    audit = pins = approvals = None
    if store is not None:
        audit = Audit(store.writer, store.origin)
        pins = Pins(store.writer, config.pins, store.pins, config_path)
        approvals = Approvals(store.writer, config.approvals, config_path)
    board = Switchboard(config, observers=observers(config, metrics, audit, pins, approvals))
    if store is not None:  # without an `identity_key`, the store's key signs the callers' statements
        board.vouching.default = store.identity_key
    return Gateway(board, metrics, store, pins)


async def serve_stdio(gateway: Gateway, serving: Serving | None = None) -> None:
    """Serve on stdin/stdout until stdin closes or a signal arrives."""
    async with gateway.kept():
        await _serve_stdio(gateway.board, gateway.metrics, serving or Serving(config_path=""))


async def _serve_stdio(board: Switchboard, metrics: Metrics, serving: Serving) -> None:
    server = build_server(board)
    options = server.create_initialization_options()
    board_scope = anyio.CancelScope()
    board_done = anyio.Event()

    async def run_board(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with board_scope:
            await board.run(task_status=task_status)
        board_done.set()

    async def drain() -> None:
        board_scope.cancel()
        await board_done.wait()

    # Bound before anything starts: a bad --metrics address is one line and exit 2 (SPEC §14).
    probes_socket = None if serving.metrics is None else listen(*serving.metrics)
    async with anyio.create_task_group() as tasks:
        await tasks.start(run_board)
        if serving.config_path:
            tasks.start_soon(watch, board, serving.config_path, serving.watch)
        if serving.metrics is not None and probes_socket is not None:
            host, port = serving.metrics
            routes = probe_routes(board.readiness, metrics)
            limits = serving.http_limits
            probes = web_server(
                guarded(Starlette(routes=routes), AllowedHosts.for_bind(host), limits), host, port, limits
            )
            tasks.start_soon(lambda: probes.serve(sockets=[probes_socket]))
            log.info("probes and metrics at http://%s:%d/metrics", host, port)
        # Requests read before stdin's end are answered first; none can take longer than this.
        answer_within_s = board.config.startup_wait_s + max(
            (spec.health.call_timeout_s for spec in board.config.servers), default=0.0
        )
        lane = ClientLane(
            board,
            {"name": SERVER_NAME, "version": __version__},
            answer_within_s + DRAIN_GRACE_S,
            server.rounds,
        )
        async with lane.running():
            await run_stdio(
                server,
                options,
                drain=drain,
                what="stopping the downstreams",
                message_limit=serving.message_limit,
                answer_within_s=answer_within_s + DRAIN_GRACE_S,
                divert=lane,
            )
        log.info("stdin closed; stopping the downstreams")
        server.rounds.close()
        tasks.cancel_scope.cancel()


async def serve_http(gateway: Gateway, options: Serving) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp (and the probes) until SIGINT or SIGTERM."""
    async with gateway.kept():
        await _serve_http(gateway.board, gateway.metrics, options, gateway.pins)


async def _serve_http(
    board: Switchboard, metrics: Metrics, options: Serving, pins: Pins | None = None
) -> None:
    assert options.http is not None
    host, port = options.http
    limits = options.http_limits
    listener = listen(host, port)  # a bad address is one line and exit 2, before anything starts
    hosts = AllowedHosts.for_bind(host)
    server = build_server(board)
    auth = FaceAuth.of(options, host, port)
    routes = [
        *probe_routes(board.readiness, metrics, auth.check(), auth.resource.challenge("invalid_token")),
        *status_page(board, auth, pins),
    ]
    app = server.streamable_http_app(
        host=host,
        transport_security=hosts.transport_security(),
        session_idle_timeout=limits.session_idle_s,
        max_sessions=limits.max_sessions,
        max_request_body_size=limits.max_body_bytes,
        custom_starlette_routes=routes,
        **auth.sdk(host, port),
    )
    auth.challenge(app)
    cap_sessions(app, limits.max_sessions_per_principal, limits.session_idle_s)
    lane = lane_in_front(app, board, server, metrics.lean_calls.inc)  # tools/call beside the SDK (§25)
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        if auth.oauth is not None:
            tasks.start_soon(auth.oauth.issuer.start)
        if options.config_path:
            tasks.start_soon(watch, board, options.config_path, options.watch)
        log.info("switchboard %s serving Streamable HTTP at http://%s:%d/mcp", __version__, host, port)
        # An answer-only event stream goes as one JSON body: the client keeps its connection.
        await run_http(guarded(JsonAnswers(app), hosts, limits), host, port, limits, listener=listener)
        log.info("HTTP server stopped; stopping the downstreams")
        lane.stop()
        server.rounds.close()
        tasks.cancel_scope.cancel()
