"""`colibri ui` over plain HTTP: tokens, the cookie, refusals, and --no-auth only on loopback."""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path

from tests.helpers import clean_env
from tests.http.helpers import colibri, get, make_token, running
from tests.ui.browser import ui_server


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _post_login(base: str, token: str, next_path: str) -> tuple[int, dict[str, str]]:
    body = urllib.parse.urlencode({"token": token, "next": next_path}).encode()
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(f"{base}/login", data=body), timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def test_no_auth_is_refused_off_loopback(tmp_path: Path) -> None:
    done = colibri("ui", "--http", "0.0.0.0:8765", "--no-auth", env=clean_env(tmp_path))
    assert done.returncode == 2
    assert "not a loopback address" in done.stderr


def test_pages_need_a_token_and_keep_it_in_a_strict_httponly_cookie(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    token = make_token(env, "viewer", "read")
    with ui_server(env, tmp_path) as base:
        status, _, body = get(f"{base}/audit", {"Authorization": "Bearer col_wrong"})
        assert status == 200 and b"Sign in" in body  # redirected to the form
        status, _, body = get(f"{base}/audit", {"Authorization": f"Bearer {token}"})
        assert status == 200 and b'id="actions"' in body
        status, headers = _post_login(base, token, "//elsewhere.example/")
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        status, _ = _post_login(base, "col_wrong", "/")
        assert status == 401


def test_bad_input_gets_a_clear_status(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    make_token(env, "viewer", "read")
    with ui_server(env, tmp_path, "--no-auth") as base:
        assert get(f"{base}/?after_todo=not-a-cursor")[0] == 400
        assert get(f"{base}/audit?before=-1")[0] == 400
        assert get(f"{base}/tasks/T-404")[0] == 404
        assert get(f"{base}/trail/nope")[0] == 404
        for path in ("/audit/1", "/audit/abc", "/audit/1/proof.json", "/no-such-page"):
            status, _, body = get(f"{base}{path}")
            assert status == 404 and b'id="back"' in body, path
        assert get(f"{base}/trail?before=bm9wZQ")[0] == 400
        status, _, body = get(f"{base}/audit?tool=%C3%28")
        assert status == 400 and b"not UTF-8" in body
        assert get(f"{base}/", {"Host": "evil.example"})[0] == 421


def test_serve_http_shows_the_same_pages_at_root(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    token = make_token(env, "viewer", "read")
    with running(env, tmp_path) as server:
        status, _, body = get(f"{server.base}/")
        assert status == 200 and b"Sign in" in body
        status, _, body = get(f"{server.base}/", {"Authorization": f"Bearer {token}"})
        assert status == 200 and b'id="column-todo"' in body
        status, headers = _post_login(server.base, token, "/trail")
        assert status == 303 and headers["location"] == "/trail"
        cookie = headers["set-cookie"].split(";", 1)[0]
        status, _, body = get(f"{server.base}/trail", {"Cookie": cookie})
        assert status == 200 and b'id="sessions"' in body
        assert get(f"{server.base}/", {"Authorization": f"Bearer {token}", "Host": "evil.example"})[0] == 421
        # The MCP endpoint keeps its own rule: a cookie is not a bearer token.
        assert get(server.url, {"Cookie": cookie})[0] == 401
