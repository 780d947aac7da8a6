"""The routes of the pages: `/` board, `/tasks/<id>`, `/trail`, `/trail/<session_id>`, `/audit`,
`/audit/<n>` and its proof `/audit/<n>/proof.json`, `/pins` (a switchboard's tool pins), `/approvals`
(the calls a switchboard holds for a person, SPEC §22), the sign-in form and the sign-out.

Every page is plain HTML that reads without JavaScript and refreshes itself: a small script
fetches the page again and replaces its data regions only, never a form someone is typing in
(templates/_live.html); without JavaScript a meta refresh reloads it. Nothing here writes: the
handlers (content.py) only read; the one write is a decision posted on /approvals (approvals_views.py).
The Host/Origin allow-list, the body caps and the anti-framing headers are the face's, in front
of every route (`serving.guards`); `/login` and `/logout` add their own rule: a same-origin POST only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from colibri.core.errors import StorageError
from colibri.domains.log.note import Verifier
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.origin import same_origin_post
from colibri.ui import auth, pins_views
from colibri.ui.approvals_views import ApprovalPages, Writable
from colibri.ui.content import Content
from colibri.ui.reader import Reader
from colibri.ui.render import HAS_PINS, SIGNED_IN, bad_request, render

Handler = Callable[[Request], Awaitable[Response]]


def page_routes(
    reader: Reader,
    *,
    require_token: bool,
    verifier: Callable[[], Verifier | None] = lambda: None,
    public_url: str | None = None,
    switchboard_config: str | None = None,
    oauth: OAuthVerifier | None = None,
    writable: Writable = None,
) -> list[Route]:
    """The pages, reading through `reader`; with `require_token` every page needs a valid token.
        `verifier` gives the key checkpoints are checked with (read when asked: serve --http has
        its key only once it has booted). `public_url` is the URL people use (behind a proxy): an
        https one makes the cookie `Secure`, and its origin may post the sign-in form. `switchboard_config`
    is the switchboard's config file, named in the pins page's approve commands. `oauth` proves an
    identity provider's tokens beside Colibri's own (SPEC §20). `writable` opens the store for a
    decision posted on /approvals (None: the page only shows)."""
    secure_cookie = (public_url or "").lower().startswith("https://")
    content = Content(reader, verifier, switchboard_config)
    held = ApprovalPages(reader, writable, public_url, oauth)

    def guarded(handler: Handler) -> Handler:
        async def run(request: Request) -> Response:
            name = None
            if require_token:
                name = await auth.principal_of(reader, auth.presented_token(request), oauth)
                if name is None:
                    return auth.to_login(request)
            signed_in, has_pins = SIGNED_IN.set(name), HAS_PINS.set(False)
            try:
                HAS_PINS.set(await reader.read(pins_views.store_has_pins))
                return await handler(request)
            except (ValueError, ValidationError) as exc:  # query.BadQuery is a ValueError
                return bad_request(str(exc), request.url.path)
            except StorageError as exc:
                return render("error.html", 503, title="Database unavailable", message=str(exc))
            finally:
                SIGNED_IN.reset(signed_in)
                HAS_PINS.reset(has_pins)

        return run

    async def login_form(request: Request) -> Response:
        return render("login.html", title="Sign in", next=auth.safe_next(request.query_params.get("next")))

    async def login(request: Request) -> Response:
        if not same_origin_post(request.headers, public_url):
            message = "Sign in from this server's own form: a sign-in posted by another site is refused."
            return render("error.html", 403, title="Forbidden", message=message)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0].strip()
        wanted = auth.safe_next((form.get("next") or ["/"])[0])
        if await auth.principal_of(reader, token, oauth) is None:
            message = "That token is not active here (unknown, revoked or expired)."
            return render("login.html", 401, title="Sign in", next=wanted, message=message)
        response = RedirectResponse(wanted, status_code=303)
        return auth.with_cookie(response, token, secure=secure_cookie or request.url.scheme == "https")

    async def logout_form(request: Request) -> Response:
        return render("logout.html", title="Sign out")

    async def logout(request: Request) -> Response:
        # A POST from our own pages only: a link elsewhere must not sign a visitor out.
        if not same_origin_post(request.headers, public_url):
            message = "Sign out from this server's own pages: a sign-out posted by another site is refused."
            return render("error.html", 403, title="Forbidden", message=message)
        response = RedirectResponse("/login", status_code=303)
        secure = secure_cookie or request.url.scheme == "https"
        return auth.without_cookie(response, secure=secure)

    return [
        Route("/", guarded(content.board), methods=["GET"]),
        Route("/tasks/{task_id}", guarded(content.task), methods=["GET"]),
        Route("/trail", guarded(content.sessions), methods=["GET"]),
        Route("/trail/{session_id}", guarded(content.session), methods=["GET"]),
        Route("/audit", guarded(content.audit), methods=["GET"]),
        Route("/audit/{number}", guarded(content.call), methods=["GET"]),
        Route("/audit/{number}/proof.json", guarded(content.proof), methods=["GET"]),
        Route("/pins", guarded(content.pins), methods=["GET"]),
        Route("/approvals", guarded(held.page), methods=["GET"]),
        Route("/approvals/{approval_id}", guarded(held.decide), methods=["POST"]),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout_form, methods=["GET"]),
        Route("/logout", logout, methods=["POST"]),
    ]
