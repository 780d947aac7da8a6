"""The switchboard's HTTP faces under the abuse the team trial found (SPEC §14): the same limits and
checks as `serve --http` and `colibri ui` — every route behind the Host/Origin allow-list, `/metrics`
and `/status` behind a token whenever there are tokens, a sign-in only from its own form, bodies
capped, sessions capped per token, and start-up errors in one line."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.helpers import INITIALIZE, MCP_HEADERS
from tests.http.abuse import MIB, post_huge_body, refuses_foreign_hosts_and_origins, rss_bytes
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

ROUTES = [
    ("POST", "/mcp"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/status"),
    ("GET", "/status/login"),
    ("POST", "/status/login"),
]


def _token(tokens_file: Path, name: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", name, "--file", str(tokens_file)],
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@contextmanager
def _board(
    tmp_path: Path, *, tokens: bool = True, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    sections = {"auth": {"tokens_file": str(tmp_path / "tokens")}} if tokens else {}
    config = write_config(tmp_path, {"a": Downstreams(tmp_path).fault("a")}, **sections)
    port = free_port()
    extra = () if tokens else ("--no-auth",)
    process = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}", *extra),
        env={**switchboard_env(), **(env or {})},
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}", process
    finally:
        stop(process)


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    return {name: _token(tmp_path / "tokens", name) for name in ("ana", "ben")}


def test_every_route_refuses_a_foreign_host_or_origin(tmp_path: Path, tokens: dict[str, str]) -> None:
    """The trial: `/status`, `/metrics` and `/readyz` answered any Host while `/mcp` gave 421."""
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['ana']}"}
    with _board(tmp_path) as (base, _), httpx2.Client(base_url=base, timeout=10) as http:
        refuses_foreign_hosts_and_origins(http, ROUTES, auth, "token=x")


def test_metrics_and_status_need_a_token_whenever_there_are_tokens(
    tmp_path: Path, tokens: dict[str, str]
) -> None:
    with _board(tmp_path) as (base, _), httpx2.Client(base_url=base, timeout=10) as http:
        bare = http.get("/metrics")
        assert bare.status_code == 401 and "switchboard_" not in bare.text
        assert http.get("/metrics", headers={"Authorization": "Bearer col_wrong"}).status_code == 401
        shown = http.get("/metrics", headers={"Authorization": f"Bearer {tokens['ana']}"})
        assert shown.status_code == 200 and "switchboard_" in shown.text
        assert http.get("/status").status_code == 303  # to the sign-in form
    (tmp_path / "open").mkdir()
    with _board(tmp_path / "open", tokens=False) as (base, _):
        assert httpx2.get(f"{base}/metrics", timeout=10).status_code == 200  # loopback, --no-auth


def test_the_status_sign_in_is_accepted_only_from_its_own_form(
    tmp_path: Path, tokens: dict[str, str]
) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = f"token={tokens['ben']}"
    with _board(tmp_path) as (base, _), httpx2.Client(base_url=base, timeout=10) as http:
        forged = http.post("/status/login", content=body, headers={**form, "Sec-Fetch-Site": "cross-site"})
        assert forged.status_code == 403 and "set-cookie" not in forged.headers
        own = http.post("/status/login", content=body, headers={**form, "Origin": base})
        assert own.status_code == 303 and "colibri_switchboard_token" in own.headers["set-cookie"]
        page = http.get("/status", headers={"Sec-Fetch-Site": "same-origin"})
        assert page.status_code == 200
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["content-security-policy"] == "frame-ancestors 'none'"


@pytest.mark.parametrize("declared", [True, False])
def test_a_300_mb_sign_in_is_refused_with_413_and_the_switchboard_does_not_grow(
    tmp_path: Path, tokens: dict[str, str], declared: bool
) -> None:
    with _board(tmp_path) as (base, process):
        port = int(base.rsplit(":", 1)[1])
        before = rss_bytes(process.pid)
        answer = post_huge_body(port, "/status/login", 300 * MIB, declared=declared)
        grown = rss_bytes(process.pid) - before
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert grown < 40 * MIB, f"the switchboard grew by {grown / MIB:.0f} MiB"


def test_one_token_holds_at_most_its_share_of_sessions(tmp_path: Path, tokens: dict[str, str]) -> None:
    env = {"COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL": "3"}
    with _board(tmp_path, env=env) as (base, _), httpx2.Client(timeout=30) as http:

        def opened(token: str) -> int:
            headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
            return http.post(f"{base}/mcp", json=INITIALIZE, headers=headers).status_code

        assert [opened(tokens["ana"]) for _ in range(4)] == [200, 200, 200, 503]
        assert opened(tokens["ben"]) == 200  # not locked out by ana


def test_a_tokens_file_others_may_write_is_refused_in_one_line(
    tmp_path: Path, tokens: dict[str, str]
) -> None:
    (tmp_path / "tokens").chmod(0o666)
    config = write_config(
        tmp_path, {"a": Downstreams(tmp_path).fault("a")}, auth={"tokens_file": str(tmp_path / "tokens")}
    )
    done = subprocess.run(
        switchboard_command(config, "--http", f"127.0.0.1:{free_port()}"),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert str(tmp_path / "tokens") in line and "Traceback" not in done.stderr


@pytest.mark.parametrize("flag", ["--http", "--metrics"])
def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, flag: str) -> None:
    config = write_config(tmp_path, {"a": Downstreams(tmp_path).fault("a")})
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [
                *switchboard_command(config, flag, f"127.0.0.1:{port}"),
                *(["--no-auth"] if flag == "--http" else []),
            ],
            env=switchboard_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(
        f"colibri switchboard: cannot listen on 127.0.0.1:{port}: the port is already in use"
    )
    assert "Traceback" not in done.stderr


def test_no_auth_is_refused_for_a_name_that_merely_starts_with_127(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": Downstreams(tmp_path).fault("a")})
    done = subprocess.run(
        switchboard_command(config, "--http", "127.attacker.example:8000", "--no-auth"),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "loopback" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
