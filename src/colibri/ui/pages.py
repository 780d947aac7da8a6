"""The routes of the pages: `/` board, `/tasks/<id>`, `/trail`, `/trail/<session_id>`, `/audit`.

Every page is plain HTML that reads without JavaScript and refreshes itself (a meta refresh:
polling that needs no script). Nothing here writes: handlers only call `views`, which read.
The Host/Origin allow-list, the body caps and the anti-framing headers are the face's, in front
of every route (`serving.guards`); `/login` adds its own rule: a same-origin POST only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from colibri import __version__
from colibri.core.errors import StorageError
from colibri.domains.log.note import Verifier
from colibri.serving.origin import same_origin_post
from colibri.ui import auth, views
from colibri.ui.reader import Reader

REFRESH_S = 5
Handler = Callable[[Request], Awaitable[Response]]

_templates = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("refresh", 0)
    html = _templates.get_template(name).render(version=__version__, **context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def page_routes(
    reader: Reader,
    *,
    require_token: bool,
    verifier: Callable[[], Verifier | None] = lambda: None,
    public_url: str | None = None,
) -> list[Route]:
    """The pages, reading through `reader`; with `require_token` every page needs a valid token.
    `verifier` gives the key checkpoints are checked with (read when asked: serve --http has
    its key only once it has booted). `public_url` is the URL people use (behind a proxy): an
    https one makes the cookie `Secure`, and its origin may post the sign-in form."""
    secure_cookie = (public_url or "").lower().startswith("https://")

    def guarded(handler: Handler) -> Handler:
        async def run(request: Request) -> Response:
            if require_token and await auth.principal_of(reader, auth.presented_token(request)) is None:
                return auth.to_login(request)
            try:
                return await handler(request)
            except (ValueError, ValidationError) as exc:
                return render("error.html", 400, title="Bad request", message=str(exc))
            except StorageError as exc:
                return render("error.html", 503, title="Database unavailable", message=str(exc))

        return run

    async def board(request: Request) -> Response:
        cursors = {status: request.query_params.get(f"after_{status}") for status in views.STATUSES}
        data = await reader.read(lambda db: views.board(db, cursors))
        return render("board.html", refresh=REFRESH_S, title="Board", **data)

    async def task(request: Request) -> Response:
        task_id = request.path_params["task_id"]
        after = request.query_params.get("after")
        data = await reader.read(lambda db: views.task_page(db, task_id, after))
        if data is None:
            return render("error.html", 404, title="Not found", message=f"no task {task_id}")
        return render("task.html", refresh=REFRESH_S, title=task_id, **data)

    async def sessions(request: Request) -> Response:
        before = _int(request.query_params.get("before"))
        data = await reader.read(lambda db: views.sessions_page(db, before))
        return render("trail.html", refresh=REFRESH_S, title="Trail", **data)

    async def session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        kind = request.query_params.get("kind") or None
        after = request.query_params.get("after")
        key = verifier()
        data = await reader.read(lambda db: views.session_page(db, session_id, kind, after, key))
        if data is None:
            return render("error.html", 404, title="Not found", message=f"no session {session_id}")
        return render("session.html", refresh=REFRESH_S, title=session_id, **data)

    async def audit(request: Request) -> Response:
        before = _int(request.query_params.get("before"))
        filters = {name: request.query_params.get(name) or None for name in ("tool", "principal", "outcome")}
        data = await reader.read(lambda db: views.audit_page(db, before, filters))
        return render("audit.html", refresh=REFRESH_S, title="Audit", **data)

    async def login_form(request: Request) -> Response:
        return render("login.html", title="Sign in", next=auth.safe_next(request.query_params.get("next")))

    async def login(request: Request) -> Response:
        if not same_origin_post(request.headers, public_url):
            message = "Sign in from this server's own form: a sign-in posted by another site is refused."
            return render("error.html", 403, title="Forbidden", message=message)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0].strip()
        wanted = auth.safe_next((form.get("next") or ["/"])[0])
        if await auth.principal_of(reader, token) is None:
            message = "That token is not active here (unknown, revoked or expired)."
            return render("login.html", 401, title="Sign in", next=wanted, message=message)
        response = RedirectResponse(wanted, status_code=303)
        return auth.with_cookie(response, token, secure=secure_cookie or request.url.scheme == "https")

    async def logout(request: Request) -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(auth.COOKIE, path="/")
        return response

    return [
        Route("/", guarded(board), methods=["GET"]),
        Route("/tasks/{task_id}", guarded(task), methods=["GET"]),
        Route("/trail", guarded(sessions), methods=["GET"]),
        Route("/trail/{session_id}", guarded(session), methods=["GET"]),
        Route("/audit", guarded(audit), methods=["GET"]),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["GET"]),
    ]


def _int(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 19:
        raise ValueError(f"expected a position from this page's links, got {value!r}")
    return int(value)
