"""The identity provider's metadata and keys as a face keeps them (SPEC §20), against a real HTTP
issuer in the test process: discovery, an issuer that names another, keys fetched again for an
unknown kid at most once a minute, and keys kept while the provider is away."""

from __future__ import annotations

import pytest

from colibri.serving.oauth import OAuthSettings
from colibri.serving.oauth.issuer import Issuer, IssuerUnavailable, well_known
from colibri.serving.oauth.verifier import OAuthVerifier
from tests.helpers.static_issuer import static_issuer

pytestmark = pytest.mark.anyio
AUDIENCE = "https://colibri.example/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rfc_8414_puts_the_well_known_path_before_the_issuers_own() -> None:
    assert well_known("https://idp.example/tenant/a", "oauth-authorization-server") == (
        "https://idp.example/.well-known/oauth-authorization-server/tenant/a"
    )
    assert well_known("https://idp.example", "oauth-authorization-server") == (
        "https://idp.example/.well-known/oauth-authorization-server"
    )


async def test_metadata_naming_another_issuer_is_refused() -> None:
    with static_issuer() as provider:
        issuer = Issuer(provider.issuer + "/")  # its metadata names the issuer without the slash
        with pytest.raises(IssuerUnavailable, match="RFC 8414"):
            await issuer.metadata()


async def test_an_unknown_kid_fetches_the_keys_at_most_once_a_minute() -> None:
    clock = Clock()
    with static_issuer() as provider:
        verifier = OAuthVerifier(
            OAuthSettings(provider.issuer, AUDIENCE), Issuer(provider.issuer, clock=clock)
        )
        await verifier.issuer.start()
        assert provider.fetches == 1
        for number in range(20):
            assert await verifier.verify_token(provider.token(AUDIENCE, kid=f"made-up-{number}")) is None
        assert provider.fetches == 2  # the first unknown kid asked once; the flood then waits
        clock.now += 61
        assert await verifier.verify_token(provider.token(AUDIENCE, kid="made-up-late")) is None
        assert provider.fetches == 3


async def test_keys_already_fetched_keep_working_while_the_provider_is_away() -> None:
    with static_issuer() as provider:
        verifier = OAuthVerifier(OAuthSettings(provider.issuer, AUDIENCE))
        await verifier.issuer.start()
        provider.published = False
        access = await verifier.verify_token(provider.token(AUDIENCE, alg="EdDSA"))
        assert access is not None and access.client_id == "ana@example.com"
        assert access.scopes == ["read", "write"] and access.issuer == provider.issuer
