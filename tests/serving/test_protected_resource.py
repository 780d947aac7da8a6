"""A token short of the scope /mcp requires is a 403 `insufficient_scope` naming the metadata and
every scope (SPEC §20; the MCP authorization spec's runtime insufficient-scope answer).

No face's tokens can lack /mcp's scope today (every database token holds `read`; the switchboard's
tokens file requires none), so this drives `RequireBearer` behind the SDK's own bearer backend with
the switchboard's real tokens file as the verifier, whose tokens carry no scope, and asks for `read`.
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from colibri.serving.protected_resource import ProtectedResource, RequireBearer
from colibri.switchboard.faces import TokensFile


async def answered(request: Request) -> PlainTextResponse:
    return PlainTextResponse("in")


def app_requiring(tokens: TokensFile, required: list[str]) -> Starlette:
    resource = ProtectedResource("https://colibri.example/mcp")
    inner = Route("/mcp", answered).app
    return Starlette(
        routes=[Route("/mcp", RequireBearer(inner, resource, required))],
        middleware=[Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(tokens))],
    )


def test_a_token_without_the_scope_required_is_403_insufficient_scope(tmp_path: Path) -> None:
    tokens = TokensFile(tmp_path / "tokens.jsonl")
    token = tokens.create("ana")
    with TestClient(app_requiring(tokens, ["read"])) as client:
        response = client.get("/mcp", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert response.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", '
        'resource_metadata="https://colibri.example/.well-known/oauth-protected-resource/mcp", '
        'scope="colibri:read colibri:write", error_description="the token lacks the scope read"'
    )
    assert response.json()["error"] == "insufficient_scope"


def test_a_token_holding_the_scope_required_passes(tmp_path: Path) -> None:
    tokens = TokensFile(tmp_path / "tokens.jsonl")
    token = tokens.create("ana")
    with TestClient(app_requiring(tokens, [])) as client:
        response = client.get("/mcp", headers={"Authorization": f"Bearer {token}"})
    assert (response.status_code, response.text) == (200, "in")
