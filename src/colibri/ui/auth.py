"""Who may read the pages (SPEC §9): the same bearer tokens as `colibri serve --http`.

A token is entered once in a form and kept in an HttpOnly, SameSite=Strict cookie; a client
may also send it as `Authorization: Bearer`. Any active token may read (read or write scope):
the pages only read. With an identity provider (`--oauth-issuer`, SPEC §20) its access tokens are
accepted too, read scope or more, their principal the configured claim. Without authentication
(`--no-auth`, loopback only) every request passes.
"""

from __future__ import annotations

import time
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from colibri.core.database import Database
from colibri.domains import access
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.ui.reader import Reader

COOKIE = "colibri_token"


def presented_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(COOKIE)


async def principal_of(reader: Reader, token: str | None, oauth: OAuthVerifier | None = None) -> str | None:
    """The name of the active token `token` is (or the principal of an identity provider's access
    token that may read), or None."""
    if not token:
        return None
    if oauth is not None and not access.well_formed(token):
        proved = await oauth.verify_token(token)
        return proved.client_id if proved is not None and "read" in proved.scopes else None

    def check(db: Database) -> str | None:
        info = access.authenticate(db, token, time.time())
        return None if info is None else info.name

    return await reader.read(check)


def to_login(request: Request) -> Response:
    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(wanted, safe='')}", status_code=303)


def safe_next(value: str | None) -> str:
    """Only a path on this server: an open redirect would hand the cookie's trust elsewhere."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def with_cookie(response: Response, token: str, secure: bool) -> Response:
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure, path="/")
    return response


def without_cookie(response: Response, secure: bool) -> Response:
    """`response` clearing the token's cookie (set with the same attributes, so browsers drop it)."""
    response.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="strict")
    return response
