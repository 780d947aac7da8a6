"""The Python SDK's own OAuth client completing the MCP authorization flow unaided (SPEC §20):
from the 401 to the metadata, the provider, a token and the call. Shared by the serve and the
switchboard tests: nothing here knows which face it talks to.

    async with signed_in_client(url, idp, flow="client_credentials") as client: ...
    async with signed_in_client(url, idp, flow="pkce", user="ana@example.com") as client: ...

The authorization code flow's sign-in runs in headless Chromium (Playwright) on the provider's own
login and consent pages; the browser's arrival at the client's loopback redirect URI is the answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.helpers.idp import IdentityProvider
from tests.ui.browser import browser_page


class Memory:
    """What the SDK's OAuth client learns, kept for one client; a known client's registration."""

    def __init__(self, client: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def sign_in_with_chromium(url: str, user: str, redirect_uri: str) -> str:
    """Where the provider sends the browser back after `user` signs in and consents at `url`."""
    with browser_page() as page:
        page.route(f"{redirect_uri}**", lambda route: route.fulfill(status=200, body="signed in"))
        page.goto(url)
        page.fill('input[name="login"]', user)
        page.fill('input[name="password"]', "any password")
        page.click("button[type=submit]")
        page.click("text=Continue")
        page.wait_for_url(f"{redirect_uri}**")
        location: str = page.url
        return location


def provider_for(url: str, idp: IdentityProvider, flow: str, user: str) -> OAuthClientProvider:
    if flow == "client_credentials":
        return ClientCredentialsOAuthProvider(
            url, Memory(), idp.client_id, idp.client_secret, issuer=idp.issuer
        )
    came_back: list[str] = []

    async def redirect(authorization_url: str) -> None:
        came_back.append(
            await anyio.to_thread.run_sync(sign_in_with_chromium, authorization_url, user, idp.redirect_uri)
        )

    async def callback() -> AuthorizationCodeResult:
        params = httpx2.URL(came_back.pop()).params
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    registered = OAuthClientInformationFull(
        client_id=idp.public_client_id,
        redirect_uris=[idp.redirect_uri],  # type: ignore[list-item]
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    metadata = OAuthClientMetadata(
        redirect_uris=[idp.redirect_uri],  # type: ignore[list-item]
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(url, metadata, Memory(registered), redirect, callback)


@asynccontextmanager
async def signed_in_client(
    url: str, idp: IdentityProvider, *, flow: str, user: str = "ana@example.com"
) -> AsyncIterator[Client]:
    """An SDK client of `url` holding only what the flow gave it: no token configured by hand."""
    provider = provider_for(url, idp, flow, user)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client,
    ):
        yield client
