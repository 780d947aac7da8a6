"""`GET /status` on the switchboard's HTTP face: each server's state for the people in charge (SPEC §13).

The page renders `status.snapshot` (what `switchboard_status` returns): state, last checks,
failures, cooldown left and a timeline of transitions, and each withheld (or, with "pins": "warn",
changed) tool's fields that changed and the unified diff of its pinned and listed definitions
(SPEC §21) — a downstream's text, escaped like everything else on the page. Plain HTML that
refreshes itself; with a tokens file a token is asked for once and kept in an HttpOnly,
SameSite=Strict cookie, as for `colibri ui`. A caller with a policy (its own, or its IdP groups')
sees only the servers and tools it may call (routing's `status_for`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from colibri import __version__
from colibri.core.identity import Identity
from colibri.core.shown import shown
from colibri.serving.origin import same_origin_post

COOKIE = "colibri_switchboard_token"
REFRESH_S = 2

# Who reads the page: a token's name, or the Identity a token proved (whose IdP groups policies name).
Reader = str | Identity
Snapshot = Callable[[Reader], dict[str, Any]]  # the status as one caller may see it
Diffs = Callable[[], Mapping[str, str]]  # changed tool -> unified diff of its definitions
Verify = Callable[[str], Awaitable[Reader | None]]  # who a token is, None for no token of ours

_templates = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
# Names a downstream chose (its tools', its serverInfo's) with control and bidi characters escaped.
_templates.filters["shown"] = shown


def render_status(status: dict[str, Any], diffs: Mapping[str, str] | None = None) -> str:
    page = _templates.get_template("status.html")
    return page.render(status=status, diffs=diffs or {}, version=__version__, refresh=REFRESH_S)


def status_routes(
    snapshot: Snapshot, verify: Verify | None, diffs: Diffs | None = None, anonymous: str = "local"
) -> list[Route]:
    """`/status` (and its sign-in form when `verify` is given: tokens are required; without, the page
    is what `anonymous` may see); `diffs` gives the changed tools' diffs, which only this page shows
    (never `switchboard_status`, read by agents)."""

    async def principal(request: Request) -> Reader | None:
        if verify is None:
            return anonymous
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(COOKIE)
        return await verify(token) if token else None

    async def status(request: Request) -> Response:
        who = await principal(request)
        if who is None:
            return RedirectResponse("/status/login", status_code=303)
        shown = render_status(snapshot(who), None if diffs is None else diffs())
        return HTMLResponse(shown, headers={"Cache-Control": "no-store"})

    async def login_form(request: Request) -> Response:
        return HTMLResponse(_templates.get_template("status_login.html").render(message=None))

    async def login(request: Request) -> Response:
        if not same_origin_post(request.headers):
            # A sign-in posted from another site would put its token in our cookie (login CSRF).
            return PlainTextResponse("sign in from this server's own form", status_code=403)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0].strip()
        if verify is None or not token or await verify(token) is None:
            refused = _templates.get_template("status_login.html")
            return HTMLResponse(refused.render(message="That token is not valid here."), status_code=401)
        response = RedirectResponse("/status", status_code=303)
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/"
        )
        return response

    return [
        Route("/status", status, methods=["GET"]),
        Route("/status/login", login_form, methods=["GET"]),
        Route("/status/login", login, methods=["POST"]),
    ]
