"""`colibri serve --http` under the abuse the team trial found (SPEC §14, issue 23): huge and slow
bodies, one token opening sessions in a loop, foreign Hosts on every route, cross-site sign-ins,
framing, the cookie behind https, and /readyz asked from off loopback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx2
import pytest

from tests.helpers import INITIALIZE, MCP_HEADERS
from tests.http.abuse import (
    MIB,
    non_loopback_address,
    post_huge_body,
    post_slowly,
    refuses_foreign_hosts_and_origins,
    rss_bytes,
)
from tests.http.helpers import get, http_env, make_token, running, start_server

# Every route of the face: MCP, the probes, the RFC 9728 metadata, the pages and the sign-in.
ROUTES = [
    ("POST", "/mcp"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/.well-known/oauth-protected-resource/mcp"),
    ("GET", "/"),
    ("GET", "/trail"),
    ("GET", "/audit"),
    ("GET", "/login"),
    ("POST", "/login"),
    ("GET", "/logout"),
]


# Without a token, /mcp answers 401 before it reads a byte of the body (SPEC §21).
@pytest.mark.parametrize(
    ("path", "declared", "status"),
    [("/login", True, b"413"), ("/login", False, b"413"), ("/mcp", False, b"401")],
)
def test_a_300_mb_body_is_refused_and_the_server_does_not_grow(
    tmp_path: Path, path: str, declared: bool, status: bytes
) -> None:
    env = http_env(tmp_path)
    with running(env, tmp_path) as server:
        before = rss_bytes(server.process.pid)
        answer = post_huge_body(server.port, path, 300 * MIB, declared=declared)
        grown = rss_bytes(server.process.pid) - before
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:300]
    assert grown < 40 * MIB, f"the server grew by {grown / MIB:.0f} MiB"


def test_a_body_that_stops_arriving_is_cut_at_the_time_limit(tmp_path: Path) -> None:
    env = http_env(tmp_path, COLIBRI_HTTP_BODY_TIMEOUT_S="1.5")
    with running(env, tmp_path) as server:
        answer, waited = post_slowly(server.port, "/login", first=b"token=col_", declared=100)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"did not arrive within 1.5 s" in answer
    assert 1.4 < waited < 8, waited


def _open_session(http: httpx2.Client, url: str, token: str) -> httpx2.Response:
    return http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})


def test_one_token_holds_at_most_32_sessions_and_the_others_still_get_in(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    reader, writer = make_token(env, "ci-bot", "read"), make_token(env, "alice", "write")
    with running(env, tmp_path) as server, httpx2.Client(timeout=30) as http:
        opened = [_open_session(http, server.url, reader) for _ in range(32)]
        assert {answer.status_code for answer in opened} == {200}
        refused = _open_session(http, server.url, reader)
        assert refused.status_code == 503, refused.text
        message = refused.json()["error"]["message"]
        assert "'ci-bot' already holds 32 open MCP sessions" in message
        assert "COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL" in message
        assert _open_session(http, server.url, writer).status_code == 200  # not locked out
        # Ending one of its sessions gives the token its place back.
        ended = http.delete(
            server.url,
            headers={
                "Authorization": f"Bearer {reader}",
                "Mcp-Session-Id": opened[0].headers["mcp-session-id"],
            },
        )
        assert ended.status_code == 200, ended.text
        assert _open_session(http, server.url, reader).status_code == 200
        assert _open_session(http, server.url, reader).status_code == 503


def test_idle_sessions_give_their_place_back_and_the_total_is_capped(tmp_path: Path) -> None:
    env = http_env(
        tmp_path,
        COLIBRI_HTTP_SESSION_IDLE_S="3",
        COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL="2",
        COLIBRI_HTTP_MAX_SESSIONS="3",
    )
    first, second = make_token(env, "first", "read"), make_token(env, "second", "read")
    with running(env, tmp_path) as server, httpx2.Client(timeout=30) as http:
        assert [_open_session(http, server.url, first).status_code for _ in range(3)] == [200, 200, 503]
        assert _open_session(http, server.url, second).status_code == 200
        everyone_full = _open_session(http, server.url, second)
        assert everyone_full.status_code == 503 and "Too many open sessions" in everyone_full.text
        deadline = time.monotonic() + 15
        while _open_session(http, server.url, first).status_code != 200:
            assert time.monotonic() < deadline, "idle sessions never gave their place back"
            time.sleep(0.2)


def test_a_foreign_host_or_origin_is_refused_on_every_route(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice")
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    with running(env, tmp_path) as server, httpx2.Client(base_url=server.base, timeout=10) as http:
        refuses_foreign_hosts_and_origins(http, ROUTES, auth, f"token={token}")


def test_sign_in_is_accepted_only_from_the_servers_own_pages(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice", "read")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with running(env, tmp_path) as server, httpx2.Client(base_url=server.base, timeout=10) as http:
        body = f"token={token}&next=/trail"
        cross_site = http.post("/login", content=body, headers={**form, "Sec-Fetch-Site": "cross-site"})
        assert cross_site.status_code == 403 and "set-cookie" not in cross_site.headers
        assert "another site" in cross_site.text
        other_port = http.post("/login", content=body, headers={**form, "Origin": "http://127.0.0.1:1"})
        assert other_port.status_code == 403
        own = http.post("/login", content=body, headers={**form, "Origin": server.base})
        assert own.status_code == 303 and own.headers["location"] == "/trail"
        assert (
            "colibri_token=" in own.headers["set-cookie"]
            and "secure" not in own.headers["set-cookie"].lower()
        )


def test_pages_cannot_be_framed_and_the_cookie_is_secure_behind_https(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "alice", "read")
    public = ("--public-url", "https://colibri.example", "--allow-host", "colibri.example")
    with running(env, tmp_path, *public) as server, httpx2.Client(base_url=server.base, timeout=10) as http:
        for path in ("/", "/login", "/trail"):
            page = http.get(path)
            assert page.headers["content-security-policy"] == "frame-ancestors 'none'", path
            assert page.headers["x-frame-options"] == "DENY", path
        # Signed in over plain HTTP at the proxy's back: the cookie is Secure all the same.
        signed_in = http.post(
            "/login",
            content=f"token={token}",
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": "https://colibri.example",
            },
        )
        assert signed_in.status_code == 303, signed_in.text
        assert "; secure" in signed_in.headers["set-cookie"].lower()


def test_readyz_gives_the_boot_failures_details_only_on_loopback(tmp_path: Path) -> None:
    # A PostgreSQL store nobody serves: the boot fails naming its user, host and port.
    env = http_env(tmp_path, COLIBRI_DB_URL="postgresql://colibri_secret_user@127.0.0.1:1/colibri")
    address = non_loopback_address()
    server = start_server(env, tmp_path, "--allow-host", address, host="0.0.0.0")
    try:
        server.wait_listening()
        deadline = time.monotonic() + 30
        while (local := json.loads(get(f"{server.base}/readyz")[2])["reason"]).startswith("starting"):
            assert time.monotonic() < deadline, local
            time.sleep(0.1)
        status, _, body = get(f"http://{address}:{server.port}/readyz")
        remote = json.loads(body)["reason"]
    finally:
        assert server.stop() == 0
    assert "colibri_secret_user" in local  # the details exist, for the machine's own probes
    assert status == 503 and remote.startswith("boot failed")
    assert "colibri_secret_user" not in remote and "127.0.0.1" not in remote and "port" not in remote
