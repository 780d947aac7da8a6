"""A real `colibri serve --http` subprocess, tokens made by the real CLI, SDK clients over HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import clean_env, colibri


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def make_token(env: dict[str, str], name: str, scope: str = "write", *extra: str) -> str:
    done = colibri("token", "create", name, "--scope", scope, *extra, env=env)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token.startswith("col_") and "\n" not in token
    return token


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A plain GET: (status, headers, body), error statuses included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@dataclass
class HttpServer:
    process: subprocess.Popen[bytes]
    port: int
    env: dict[str, str]
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"server exited: {self.log.read_text()}"
            try:
                if get(f"{self.base}/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"/readyz never 200: {self.log.read_text()}")

    def wait_listening(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"server exited: {self.log.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"nothing listens on {self.port}: {self.log.read_text()}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise AssertionError(f"server ignored SIGTERM: {self.log.read_text()}") from None


def start_server(
    env: dict[str, str], tmp_path: Path, *args: str, port: int | None = None, host: str = "127.0.0.1"
) -> HttpServer:
    port = port or free_port()
    log = tmp_path / f"server-{port}-{time.monotonic_ns()}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "colibri", "serve", "--http", f"{host}:{port}", *args],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    return HttpServer(process, port, env, log)


@contextmanager
def running(env: dict[str, str], tmp_path: Path, *args: str, host: str = "127.0.0.1") -> Iterator[HttpServer]:
    server = start_server(env, tmp_path, *args, host=host)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def http_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    return clean_env(tmp_path, **overrides)


@asynccontextmanager
async def http_client(url: str, token: str | None, *, mode: str = "legacy") -> AsyncIterator[Client]:
    """The SDK client over Streamable HTTP, sending `Authorization: Bearer token`."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=30) as client,
    ):
        yield client
