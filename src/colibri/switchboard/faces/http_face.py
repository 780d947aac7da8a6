"""What the HTTP face adds around /mcp: the status page and the bearer-token check."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from colibri.serving.bearer import Verify
from colibri.serving.http import base_url
from colibri.serving.protected_resource import ProtectedResource, protect
from colibri.switchboard.audit import Pins
from colibri.switchboard.faces.serving import Serving
from colibri.switchboard.faces.status_page import status_routes
from colibri.switchboard.faces.tokens import TokensFile
from colibri.switchboard.routing import Switchboard


def token_check(options: Serving) -> Verify | None:
    """Whether a token is one of the tokens file's; None when serving without tokens (loopback)."""
    if options.tokens is None:
        return None
    tokens_file = TokensFile(options.tokens)

    async def known(token: str) -> bool:
        return await tokens_file.verify_token(token) is not None

    return known


def status_page(board: Switchboard, options: Serving, pins: Pins | None = None) -> list[Any]:
    """GET /status for people (SPEC §13), behind the same tokens as /mcp when there are any; with
    pins, each changed tool's diff (SPEC §21)."""
    return status_routes(board.router.status_for, token_name(options), None if pins is None else pins.diffs)


def token_name(options: Serving) -> Callable[[str], Awaitable[str | None]] | None:
    """The name of a token of the tokens file (None for another); None when serving without tokens."""
    if options.tokens is None:
        return None
    tokens_file = TokensFile(options.tokens)

    async def named(token: str) -> str | None:
        found = await tokens_file.verify_token(token)
        return None if found is None else found.client_id

    return named


def auth_for(options: Serving, host: str, port: int) -> dict[str, Any]:
    """The SDK's bearer-token middleware over the tokens file; nothing when serving without tokens."""
    if options.tokens is None:
        return {}
    shown = f"[{host}]" if ":" in host else host
    settings = AuthSettings(issuer_url=AnyHttpUrl(f"http://{shown}:{port}"), resource_server_url=None)
    return {"auth": settings, "token_verifier": TokensFile(options.tokens)}


def challenge_for(app: Starlette, options: Serving, host: str, port: int) -> None:
    """With tokens, /mcp's 401 and 403 name the RFC 9728 metadata, served at both well-known paths
    (SPEC §20); call it before `cap_sessions`. The resource is http://HOST:PORT/mcp."""
    if options.tokens is not None:
        protect(app, ProtectedResource(f"{base_url(host, port)}/mcp"))
