"""The identity provider the OAuth tests start (tests/helpers/idp.py) is what they take it for:
a real issuer whose JWT access tokens verify against its published keys, with token exchange
and key rotation. PyJWT checks every token, as a resource server would."""

from __future__ import annotations

import time
from typing import Any

import httpx2
import jwt
import pytest

from tests.helpers.idp import SCOPES, IdentityProvider
from tests.ui.browser import browser_page

RESOURCE = "http://127.0.0.1:9/mcp"
OTHER = "http://127.0.0.1:10/mcp"


def verified(idp: IdentityProvider, token: str, audience: str) -> dict[str, Any]:
    """The claims of `token`, its signature checked against the provider's JWKS."""
    key = jwt.PyJWKClient(idp.jwks_uri, cache_keys=False).get_signing_key_from_jwt(token)
    claims: dict[str, Any] = jwt.decode(
        token,
        key.key,
        algorithms=["RS256"],
        audience=audience,
        issuer=idp.issuer,
        options={"require": ["iss", "aud", "sub", "exp"]},
    )
    return claims


def test_discovery_names_the_issuer_its_keys_and_the_token_exchange_grant(idp: IdentityProvider) -> None:
    document = idp.discovery()
    assert document["issuer"] == idp.issuer
    assert document["jwks_uri"] == idp.jwks_uri
    assert document["token_endpoint"] == idp.token_endpoint
    grants = document["grant_types_supported"]
    assert {
        "client_credentials",
        "authorization_code",
        "urn:ietf:params:oauth:grant-type:token-exchange",
    } <= set(grants)
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert "groups" in document["claims_supported"]


def test_a_client_credentials_token_is_a_jwt_for_the_resource(idp: IdentityProvider) -> None:
    answer = idp.client_credentials_token(RESOURCE)
    assert answer["token_type"] == "Bearer"
    claims = verified(idp, answer["access_token"], RESOURCE)
    assert claims["iss"] == idp.issuer
    assert claims["aud"] == RESOURCE
    assert claims["sub"] == idp.client_id
    assert claims["scope"] == SCOPES
    assert time.time() < claims["exp"] <= time.time() + 3600
    assert jwt.get_unverified_header(answer["access_token"])["typ"] == "at+jwt"


def test_a_token_asks_for_less_scope_and_gets_only_that(idp: IdentityProvider) -> None:
    claims = verified(idp, idp.client_credentials_token(RESOURCE, "colibri:read")["access_token"], RESOURCE)
    assert claims["scope"] == "colibri:read"


def test_token_exchange_gives_a_jwt_for_another_audience_with_the_same_subject(idp: IdentityProvider) -> None:
    subject = idp.client_credentials_token(RESOURCE)["access_token"]
    answer = idp.exchange_token(subject, OTHER)
    assert answer["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    exchanged = verified(idp, answer["access_token"], OTHER)
    assert exchanged["aud"] == OTHER
    assert exchanged["sub"] == verified(idp, subject, RESOURCE)["sub"]
    assert exchanged["scope"] == SCOPES
    with pytest.raises(jwt.InvalidAudienceError):  # not a token for the first audience
        verified(idp, answer["access_token"], RESOURCE)


def test_token_exchange_refuses_a_subject_token_it_did_not_sign(idp: IdentityProvider) -> None:
    claims = {"iss": idp.issuer, "sub": "mallory", "aud": RESOURCE, "exp": int(time.time()) + 600}
    forged = jwt.encode(claims, "a secret of thirty-two bytes or more", algorithm="HS256")
    answer = httpx2.post(
        idp.token_endpoint,
        data={
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": forged,
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "audience": OTHER,
        },
        auth=(idp.client_id, idp.client_secret),
        timeout=10,
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_grant"


def test_after_rotation_tokens_are_signed_by_a_new_key_in_the_jwks(idp: IdentityProvider) -> None:
    before = idp.client_credentials_token(RESOURCE)["access_token"]
    old_kid = jwt.get_unverified_header(before)["kid"]
    new_kid = idp.rotate_keys()
    assert new_kid != old_kid
    after = idp.client_credentials_token(RESOURCE)["access_token"]
    assert jwt.get_unverified_header(after)["kid"] == new_kid
    published = [key["kid"] for key in httpx2.get(idp.jwks_uri, timeout=10).json()["keys"]]
    assert published[0] == new_kid and old_kid in published
    verified(idp, after, RESOURCE)
    verified(idp, before, RESOURCE)  # tokens issued before the rotation still verify


def test_a_signed_in_user_gets_a_jwt_with_email_and_groups(idp: IdentityProvider) -> None:
    for user, groups in (("ana@example.com", ["sre"]), ("bob@example.com", ["dev"])):
        answer = idp.authorization_code_token(user, RESOURCE)
        claims = verified(idp, answer["access_token"], RESOURCE)
        assert claims["sub"] == user
        assert claims["email"] == user
        assert claims["groups"] == groups
        assert claims["scope"] == SCOPES
        assert claims["client_id"] == idp.public_client_id


def test_a_user_token_exchanged_keeps_the_user(idp: IdentityProvider) -> None:
    subject = idp.authorization_code_token("ana@example.com", RESOURCE)["access_token"]
    exchanged = verified(idp, idp.exchange_token(subject, OTHER)["access_token"], OTHER)
    assert (exchanged["sub"], exchanged["email"], exchanged["groups"]) == (
        "ana@example.com",
        "ana@example.com",
        ["sre"],
    )
    assert exchanged["client_id"] == idp.client_id  # the gateway's client asked for it


def test_a_user_signs_in_with_chromium(idp: IdentityProvider) -> None:
    request = idp.authorization_request(RESOURCE)
    with browser_page() as page:
        # Nothing listens at the client's loopback redirect URI: the browser's arrival there is the answer.
        page.route(f"{idp.redirect_uri}**", lambda route: route.fulfill(status=200, body="signed in"))
        page.goto(request.url)
        page.fill('input[name="login"]', "bob@example.com")
        page.fill('input[name="password"]', "whatever")
        page.click("button[type=submit]")
        page.click("text=Continue")
        page.wait_for_url(f"{idp.redirect_uri}**")
        location = page.url
    claims = verified(idp, idp.redeem(request, location)["access_token"], RESOURCE)
    assert (claims["sub"], claims["groups"]) == ("bob@example.com", ["dev"])
