"""OAuth 2.1 resource server (SPEC §20): access tokens from the team's identity provider, beside
Colibri's own tokens, on `serve --http`, `switchboard --http` and `ui`.

`OAuthSettings` says which issuer and how its tokens map to a principal and scopes; `Issuer` finds
the issuer's metadata and keys (RFC 8414 / OpenID discovery, JWKS cached and refreshed); and
`OAuthVerifier` proves a token with PyJWT (or RFC 7662 introspection for an opaque one) into an
`OAuthAccess`, the SDK's `AccessToken` with the issuer, token id and groups the audit and the
policies need. `EitherVerifier` puts it beside the tokens a face already had.
"""

from colibri.serving.oauth.access import OAuthAccess, identity_of_access
from colibri.serving.oauth.either import EitherVerifier
from colibri.serving.oauth.issuer import Issuer
from colibri.serving.oauth.settings import ClientCredentials, OAuthSettings
from colibri.serving.oauth.verifier import OAuthVerifier

__all__ = [
    "ClientCredentials",
    "EitherVerifier",
    "Issuer",
    "OAuthAccess",
    "OAuthSettings",
    "OAuthVerifier",
    "identity_of_access",
]
