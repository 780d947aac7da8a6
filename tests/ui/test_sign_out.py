"""Signing out of the pages (issue 39): a sign-out in the header while signed in, a same-origin POST
like the sign-in, that clears the cookie; a sign-out posted by another site is refused."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest

from tests.helpers import clean_env
from tests.http.helpers import make_token
from tests.ui.browser import browser_page, ui_server
from tests.ui.test_next_actions_stuck import one_blocked_one_waiting

pytestmark = pytest.mark.slow


def test_signed_in_the_header_signs_out_and_the_cookie_is_gone(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    anyio.run(one_blocked_one_waiting, env)
    token = make_token(env, "supervisor", "read")
    with ui_server(env, tmp_path) as base, browser_page() as page:
        page.goto(f"{base}/login")
        assert page.locator("#sign-out").count() == 0, "no sign-out before signing in"
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        assert page.locator("#signed-in").inner_text() == "supervisor"
        page.goto(f"{base}/trail")
        page.click("#sign-out")
        page.wait_for_url(f"{base}/login")
        assert [c for c in page.context.cookies() if c["name"] == "colibri_token"] == []
        page.goto(f"{base}/audit")
        assert page.url.startswith(f"{base}/login?next="), "signed out, the pages ask for the token again"


def test_a_sign_out_from_another_site_is_refused(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    anyio.run(one_blocked_one_waiting, env)
    token = make_token(env, "supervisor", "read")
    cookies = {"colibri_token": token}
    with ui_server(env, tmp_path) as base, httpx2.Client(base_url=base, timeout=10, cookies=cookies) as http:
        forged = http.post("/logout", headers={"Sec-Fetch-Site": "cross-site"})
        assert forged.status_code == 403 and "set-cookie" not in forged.headers
        assert "another site is refused" in forged.text
        asked = http.get("/logout")  # a link to it shows a button; it signs no one out
        assert asked.status_code == 200 and "set-cookie" not in asked.headers
        assert 'method="post" action="/logout"' in asked.text
        own = http.post("/logout", headers={"Origin": base})
        assert own.status_code == 303 and own.headers["location"] == "/login"
        cleared = own.headers["set-cookie"].lower()
        assert cleared.startswith("colibri_token=") and "max-age=0" in cleared
