"""The checks in front of every HTTP face (`serving.guards`), on a real uvicorn over real sockets.

Each test serves a small Starlette app through `guarded` and `run_http`, as the faces do, and
talks to it with a real HTTP client or a raw socket (for bodies that never end).
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from colibri.serving.bearer import token_required
from colibri.serving.guards import guarded
from colibri.serving.hosts import AllowedHosts
from colibri.serving.http import run_http
from colibri.serving.http_limits import HttpLimits
from colibri.serving.listen import listen

pytestmark = pytest.mark.anyio

LIMITS = HttpLimits(max_body_bytes=4096, max_form_bytes=512, body_timeout_s=1.0)


async def echo_length(request: Request) -> Response:
    return PlainTextResponse(str(len(await request.body())))


async def metrics(request: Request) -> Response:
    return PlainTextResponse("colibri_up 1\n")


async def known(token: str) -> bool:
    return token == "col_good"


def app() -> Starlette:
    return Starlette(
        routes=[
            Route("/mcp", echo_length, methods=["POST"]),
            Route("/login", echo_length, methods=["POST"]),
            Route("/private", token_required(echo_length, known), methods=["POST"]),
            Route("/page", echo_length, methods=["GET"]),
            Route("/metrics", token_required(metrics, known), methods=["GET"]),
            Route("/open-metrics", token_required(metrics, None), methods=["GET"]),
        ]
    )


@asynccontextmanager
async def served(limits: HttpLimits = LIMITS) -> AsyncIterator[str]:
    listener = listen("127.0.0.1", 0)
    port = listener.getsockname()[1]
    guarded_app = guarded(app(), AllowedHosts.for_bind("127.0.0.1"), limits)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(run_http, guarded_app, "127.0.0.1", port, limits, listener=listener))
        yield f"http://127.0.0.1:{port}"
        tasks.cancel_scope.cancel()


async def test_a_foreign_host_or_origin_is_refused_on_every_route() -> None:
    async with served() as base, httpx2.AsyncClient(base_url=base) as http:
        for method, path in (("POST", "/mcp"), ("POST", "/login"), ("GET", "/page"), ("GET", "/metrics")):
            foreign_host = await http.request(method, path, headers={"Host": "evil.example"})
            assert foreign_host.status_code == 421, (path, foreign_host.text)
            assert "Host" in foreign_host.text
            foreign_origin = await http.request(method, path, headers={"Origin": "http://evil.example"})
            assert foreign_origin.status_code == 403, (path, foreign_origin.text)
            assert (await http.request(method, path, headers={"Origin": "null"})).status_code == 403
        same = await http.get("/page", headers={"Origin": base})
        assert same.status_code == 200


async def test_every_answer_forbids_framing_refusals_included() -> None:
    async with served() as base, httpx2.AsyncClient(base_url=base) as http:
        for answer in (await http.get("/page"), await http.get("/page", headers={"Host": "evil.example"})):
            assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"
            assert answer.headers["x-frame-options"] == "DENY"
            assert answer.headers["x-content-type-options"] == "nosniff"


async def test_bodies_are_capped_per_path_before_they_are_read() -> None:
    async with served() as base, httpx2.AsyncClient(base_url=base) as http:
        assert (await http.post("/login", content=b"x" * 512)).text == "512"
        refused = await http.post("/login", content=b"x" * 513)
        assert refused.status_code == 413 and "512 bytes" in refused.text
        assert "COLIBRI_HTTP_MAX_FORM_BYTES" in refused.text
        assert (await http.post("/mcp", content=b"x" * 4096)).text == "4096"
        assert (await http.post("/mcp", content=b"x" * 4097)).status_code == 413

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: read only up to the cap
            for _ in range(100):
                yield b"y" * 100

        chunked = await http.post("/login", content=chunks())
        assert chunked.status_code == 413


async def test_a_declared_oversize_body_is_refused_before_any_of_it_is_sent() -> None:
    async with served() as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 300000000\r\n\r\n")
            # headers and body may come in two segments (TCP_NODELAY): read until the server closes
            answer = await anyio.to_thread.run_sync(_read_all, raw)
    assert answer.startswith(b"HTTP/1.1 413") and b"over 4096 bytes" in answer


async def test_a_body_that_does_not_arrive_in_time_is_cut_with_408() -> None:
    async with served() as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nslow")
            started = time.monotonic()
            answer = await anyio.to_thread.run_sync(_read_all, raw)
            waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer
    assert 0.9 < waited < 5, waited


async def test_credentials_are_checked_before_the_body_is_read() -> None:
    """SPEC §21: the 401 comes while the announced body is still on its way (it never ends here);
    with a good token the same route reads its body, under the same cap."""
    async with served() as base, httpx2.AsyncClient(base_url=base) as http:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(b"POST /private HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 400\r\n\r\npartial")
            answer = await anyio.to_thread.run_sync(_read_head, raw)
        assert answer.startswith(b"HTTP/1.1 401"), answer
        good = {"Authorization": "Bearer col_good"}
        assert (await http.post("/private", content=b"x" * 512, headers=good)).text == "512"

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: cut at the cap as it is read
            for _ in range(100):
                yield b"y" * 100

        assert (await http.post("/private", content=chunks(), headers=good)).status_code == 413
        assert (await http.post("/private", content=chunks())).status_code == 401


async def test_metrics_need_a_valid_bearer_token_when_there_are_tokens() -> None:
    async with served() as base, httpx2.AsyncClient(base_url=base) as http:
        for headers in ({}, {"Authorization": "Bearer col_bad"}, {"Authorization": "Basic col_good"}):
            refused = await http.get("/metrics", headers=headers)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert "colibri_up" not in refused.text
        assert (await http.get("/metrics", headers={"Authorization": "Bearer col_good"})).status_code == 200
        assert (await http.get("/open-metrics")).status_code == 200  # no tokens: loopback, open


def _read_head(raw: socket.socket) -> bytes:
    answer = b""
    while b"\r\n\r\n" not in answer and (chunk := raw.recv(65536)):
        answer += chunk
    return answer


def _read_all(raw: socket.socket) -> bytes:
    answer = b""
    while chunk := raw.recv(65536):
        answer += chunk
    return answer
