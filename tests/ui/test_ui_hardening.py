"""`colibri ui` under the abuse the team trial found (SPEC §14, issue 23), and its verifier key."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import anyio
import httpx2
import pytest

from colibri.domains.log.keys import default_key_path, read_signer
from colibri.domains.log.note import Signer
from tests.helpers import call, clean_env, colibri, ok_data
from tests.http.abuse import MIB, post_huge_body, post_slowly, rss_bytes
from tests.http.helpers import http_client, make_token, running
from tests.ui.browser import ui_process, ui_server
from tests.ui.test_browser import agent_workflow

ROUTES = ["/", "/tasks/T-1", "/trail", "/trail/S-1", "/audit", "/login", "/logout"]
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize("declared", [True, False])
def test_a_300_mb_sign_in_is_refused_with_413_and_the_process_does_not_grow(
    tmp_path: Path, declared: bool
) -> None:
    env = clean_env(tmp_path)
    make_token(env, "viewer", "read")
    with ui_process(env, tmp_path) as (base, process):
        before = rss_bytes(process.pid)
        answer = post_huge_body(int(base.rsplit(":", 1)[1]), "/login", 300 * MIB, declared=declared)
        grown = rss_bytes(process.pid) - before
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"16384 bytes" in answer and b"COLIBRI_HTTP_MAX_FORM_BYTES" in answer
    assert grown < 40 * MIB, f"colibri ui grew by {grown / MIB:.0f} MiB"


def test_a_sign_in_that_stops_arriving_is_cut_at_the_time_limit(tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_HTTP_BODY_TIMEOUT_S="1")
    make_token(env, "viewer", "read")
    with ui_server(env, tmp_path) as base:
        answer, waited = post_slowly(int(base.rsplit(":", 1)[1]), "/login", first=b"token=", declared=80)
    assert answer.startswith(b"HTTP/1.1 408") and b"within 1 s" in answer, answer[:300]
    assert 0.9 < waited < 8, waited


def test_every_route_refuses_a_foreign_host_or_origin_and_cannot_be_framed(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    token = make_token(env, "viewer", "read")
    bearer = {"Authorization": f"Bearer {token}"}
    with ui_server(env, tmp_path) as base, httpx2.Client(base_url=base, timeout=10) as http:
        for method, path in [*(("GET", path) for path in ROUTES), ("POST", "/login")]:
            for host in ("evil.example", "127.attacker.example:8765"):
                assert http.request(method, path, headers={**bearer, "Host": host}).status_code == 421, path
            cross = http.request(method, path, headers={**bearer, "Origin": "http://evil.example"})
            assert cross.status_code == 403, (path, cross.status_code)
        for path in ("/", "/login", "/audit"):
            page = http.get(path, headers=bearer)
            assert page.status_code == 200, path
            assert page.headers["content-security-policy"] == "frame-ancestors 'none'"
            assert page.headers["x-frame-options"] == "DENY"


def test_sign_in_only_from_its_own_form_and_secure_behind_https(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    token = make_token(env, "viewer", "read")
    body = f"token={token}&next=/audit"
    with ui_server(env, tmp_path) as base, httpx2.Client(base_url=base, timeout=10) as http:
        forged = http.post("/login", content=body, headers={**FORM, "Origin": "http://127.0.0.1:1"})
        assert forged.status_code == 403 and "set-cookie" not in forged.headers
        assert (
            http.post("/login", content=body, headers={**FORM, "Sec-Fetch-Site": "cross-site"}).status_code
            == 403
        )
        own = http.post("/login", content=body, headers={**FORM, "Origin": base})
        assert own.status_code == 303 and "secure" not in own.headers["set-cookie"].lower()
    public = ("--public-url", "https://board.example", "--allow-host", "board.example")
    with ui_server(env, tmp_path, *public) as base, httpx2.Client(base_url=base, timeout=10) as http:
        proxied = http.post("/login", content=body, headers={**FORM, "Origin": "https://board.example"})
        assert proxied.status_code == 303 and "; secure" in proxied.headers["set-cookie"].lower()
        assert http.get("/login", headers={"Host": "board.example"}).status_code == 200


class OpenWatch:
    """inotify on one file: whether any process opened it since the watch began."""

    IN_OPEN, IN_ACCESS = 0x20, 0x01

    def __init__(self, path: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK)
        assert self._fd >= 0, os.strerror(ctypes.get_errno())
        watch = self._libc.inotify_add_watch(self._fd, bytes(path), self.IN_OPEN | self.IN_ACCESS)
        assert watch >= 0, os.strerror(ctypes.get_errno())

    def opened(self) -> bool:
        try:
            return bool(os.read(self._fd, 4096))
        except BlockingIOError:
            return False

    def close(self) -> None:
        os.close(self._fd)


def test_the_ui_checks_signatures_with_a_verifier_key_and_never_opens_the_signer_key(tmp_path: Path) -> None:
    """Each page says which key checked a checkpoint and where the key came from: one given with
    --verifier-key, or the one the store records (which shows only that the store matches itself)."""
    env = clean_env(tmp_path)
    ids = anyio.run(agent_workflow, env)
    key_file = default_key_path(Path(env["COLIBRI_DB_PATH"]))
    signer = read_signer(key_file).verifier()
    verifier_key, named = signer.key(), f"{signer.name}+{signer.hash:08x}"
    key_file.chmod(0)
    watch = OpenWatch(key_file)
    try:
        with ui_server(env, tmp_path, "--no-auth", "--verifier-key", verifier_key) as base:
            page = httpx2.get(f"{base}/trail/{ids['session']}", timeout=20).text
            call = httpx2.get(f"{base}/audit/1", timeout=20).text
        for shown in (page, call):
            assert 'data-signature="verified"' in shown and f'<code class="key-id">{named}</code>' in shown
            assert 'data-source="given"' in shown and 'data-source="store"' not in shown
        assert verifier_key in page
        assert 'id="verifier-source"' not in page, "a key given on the command line is not the store's"
        # Without one, the key the store recorded for its latest checkpoint, said to be the store's.
        with ui_server(env, tmp_path, "--no-auth") as base:
            page = httpx2.get(f"{base}/trail/{ids['session']}", timeout=20).text
            call = httpx2.get(f"{base}/audit/1", timeout=20).text
        store_said = (
            "the key the store records — pass <code>--verifier-key</code> to check against a key you hold"
        )
        for shown in (page, call):
            assert 'data-signature="verified"' in shown and f'<code class="key-id">{named}</code>' in shown
            assert 'data-source="store"' in shown and store_said in shown
            assert 'data-source="given"' not in shown and 'class="ok" data-signature' not in shown
        assert 'id="verifier-source"' in page and "as the store records it" in page
        stranger = Signer.generate("example.com/stranger").verifier()
        with ui_server(env, tmp_path, "--no-auth", "--verifier-key", stranger.key()) as base:
            page = httpx2.get(f"{base}/trail/{ids['session']}", timeout=20).text
        assert 'data-signature="invalid"' in page and f"{stranger.name}+{stranger.hash:08x}" in page
        assert not watch.opened(), "a page opened the signer's key file"
    finally:
        watch.close()


def test_bad_options_and_limits_exit_2_in_one_line(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    cases = [
        (("ui", "--verifier-key", "not-a-key"), env, "--verifier-key is not a verifier key"),
        (("ui", "--http", "127.attacker.example:8765", "--no-auth"), env, "not a loopback address"),
        (("ui",), {**env, "COLIBRI_HTTP_MAX_FORM_BYTES": "lots"}, "COLIBRI_HTTP_MAX_FORM_BYTES='lots'"),
    ]
    for args, case_env, expected in cases:
        done = colibri(*args, env=case_env, timeout=30)
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stdout == ""


async def _sealed_session(url: str) -> str:
    async with http_client(url, None) as client:
        session = ok_data(await call(client, "audit_session_start", {"agent_id": "a"}))["session_id"]
        await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": "x"})
        ok_data(await call(client, "merkle_finalize", {"session_id": session}))
    return str(session)


def test_serve_http_pages_check_signatures_with_the_key_it_holds_not_the_file(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    with running(env, tmp_path, "--no-auth") as server:
        session = anyio.run(_sealed_session, server.url)
        watch = OpenWatch(default_key_path(Path(env["COLIBRI_DB_PATH"])))
        try:
            page = httpx2.get(f"{server.base}/trail/{session}", timeout=20).text
            assert not watch.opened(), "a page opened the signer's key file"
        finally:
            watch.close()
    assert 'data-signature="verified"' in page and 'data-source="given"' in page
    assert 'id="verifier-key"' in page
