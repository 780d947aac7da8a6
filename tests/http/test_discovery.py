"""Discovery for clients (SPEC §20): RFC 9728 metadata at both well-known paths on `serve --http`,
`switchboard --http` and `ui`, and the `WWW-Authenticate` challenge of /mcp's 401, read by the
Python SDK's own OAuth client. Real processes, real HTTP."""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider, OAuthRegistrationError
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth, extract_scope_from_www_auth
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from colibri.switchboard.faces import TokensFile
from tests.helpers import INITIALIZE, MCP_HEADERS
from tests.http.helpers import http_env, make_token, running
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)
from tests.ui.browser import ui_process

WELL_KNOWN = "/.well-known/oauth-protected-resource"
SCOPES = "colibri:read colibri:write"


def request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None, body: object = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            method, path, body=None if body is None else json.dumps(body), headers=headers or {}
        )
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def metadata(port: int, path: str) -> dict[str, object]:
    status, headers, body = request(port, "GET", path)
    assert status == 200, (path, status, body)
    assert headers["content-type"].startswith("application/json"), headers
    document: dict[str, object] = json.loads(body)
    return document


def assert_metadata_of(port: int, resource: str) -> None:
    """Both well-known paths answer the same document naming `resource`; no token needed."""
    for path in (WELL_KNOWN, f"{WELL_KNOWN}/mcp"):
        document = metadata(port, path)
        assert document == {
            "resource": resource,
            "scopes_supported": ["colibri:read", "colibri:write"],
            "bearer_methods_supported": ["header"],
        }, path
    # Public, but behind the Host guard like every route.
    assert request(port, "GET", WELL_KNOWN, {"Host": f"rebound.example:{port}"})[0] == 421
    assert request(port, "GET", f"{WELL_KNOWN}/mcp", {"Origin": "https://evil.example"})[0] == 403


def assert_challenges(port: int, resource: str) -> None:
    """/mcp's 401: no token names the metadata and every scope, without an error code; a refused
    token adds error="invalid_token"."""
    metadata_url = resource.replace("/mcp", f"{WELL_KNOWN}/mcp")
    status, headers, _ = request(port, "POST", "/mcp", MCP_HEADERS, INITIALIZE)
    assert status == 401
    assert headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}", scope="{SCOPES}"'
    refused = {**MCP_HEADERS, "Authorization": "Bearer col_not-a-token-of-this-server"}
    status, headers, body = request(port, "POST", "/mcp", refused, INITIALIZE)
    assert status == 401
    challenge = headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", '), challenge
    assert f'resource_metadata="{metadata_url}"' in challenge and f'scope="{SCOPES}"' in challenge
    assert json.loads(body)["error"] == "invalid_token"


def test_serve_http_publishes_its_metadata_and_names_it_in_each_401(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "ana", "read")
    with running(env, tmp_path) as server:
        assert_metadata_of(server.port, server.url)
        assert_challenges(server.port, server.url)


def test_serve_http_names_its_public_url_as_the_resource(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "ana", "read")
    with running(env, tmp_path, "--public-url", "https://colibri.example/") as server:
        assert_metadata_of(server.port, "https://colibri.example/mcp")
        status, headers, _ = request(server.port, "POST", "/mcp", MCP_HEADERS, INITIALIZE)
        assert status == 401
        expected = f'resource_metadata="https://colibri.example{WELL_KNOWN}/mcp"'
        assert expected in headers["www-authenticate"]


@contextmanager
def http_board(tmp_path: Path) -> Iterator[int]:
    tokens_file = tmp_path / "tokens.jsonl"
    TokensFile(tokens_file).create("ana")
    servers = {"c": Downstreams(tmp_path).colibri(COLIBRI_MODE="MINIMAL")}
    config = write_config(tmp_path, servers, auth={"tokens_file": str(tokens_file)})
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield port
    finally:
        stop(board)


def test_switchboard_http_publishes_its_metadata_and_names_it_in_each_401(tmp_path: Path) -> None:
    with http_board(tmp_path) as port:
        resource = f"http://127.0.0.1:{port}/mcp"
        assert_metadata_of(port, resource)
        assert_challenges(port, resource)


def test_the_ui_publishes_the_metadata_of_its_pages(tmp_path: Path) -> None:
    # The ui has no /mcp: the resource it protects is its pages' root, named at both paths.
    env = http_env(tmp_path)
    make_token(env, "viewer", "read")
    with ui_process(env, tmp_path) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        assert_metadata_of(port, base)


class _Memory:
    """Where the SDK's OAuth client keeps what it learns: nothing to start with."""

    async def get_tokens(self) -> OAuthToken | None:
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        pass

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        pass


@pytest.mark.anyio
async def test_the_sdk_oauth_client_follows_the_401_to_the_metadata(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "ana", "read")
    with running(env, tmp_path) as server:
        provider = OAuthClientProvider(
            server.url,
            OAuthClientMetadata(redirect_uris=["http://127.0.0.1:1/callback"]),  # type: ignore[list-item]
            _Memory(),
        )
        asked: list[tuple[str, str, int]] = []

        async def seen(response: httpx2.Response) -> None:
            asked.append((response.request.method, response.request.url.path, response.status_code))
            if response.status_code == 401:
                assert extract_resource_metadata_from_www_auth(response) == f"{server.base}{WELL_KNOWN}/mcp"
                assert extract_scope_from_www_auth(response) == SCOPES

        async with httpx2.AsyncClient(auth=provider, event_hooks={"response": [seen]}, timeout=30) as http:
            # No issuer is configured yet, so the flow cannot end with a token (it ends trying to
            # register at this server); it must get as far as our metadata and our challenge's scopes.
            with pytest.raises(OAuthRegistrationError):
                await http.post(server.url, json=INITIALIZE, headers=MCP_HEADERS)
        assert asked[0] == ("POST", "/mcp", 401)
        assert asked[1] == ("GET", f"{WELL_KNOWN}/mcp", 200)
        assert provider.context.client_metadata.scope == SCOPES
