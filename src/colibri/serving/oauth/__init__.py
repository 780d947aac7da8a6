"""OAuth 2.1 resource server (SPEC §20): access tokens from the team's identity provider, beside
Colibri's own tokens, on `serve --http`, `switchboard --http` and `ui`.

`OAuthSettings` (settings.py) says which issuer and how its tokens map to a principal and scopes;
`Issuer` (issuer.py) finds the issuer's metadata and keys (RFC 8414 / OpenID discovery, JWKS cached
and refreshed); `OAuthVerifier` (verifier.py) proves a token with PyJWT (or RFC 7662 introspection
for an opaque one) into an `OAuthAccess` (access.py), the SDK's `AccessToken` with the issuer, token
id and groups the audit and the policies need; `EitherVerifier` (either.py) puts it beside the
tokens a face already had.

This package's face names only the settings and the proved access: reading who a request is by
must not load PyJWT and httpx for a stdio server, so the verifier and the issuer are imported from
their own modules by the faces that serve HTTP.
"""

from colibri.serving.oauth.access import OAuthAccess, identity_of_access
from colibri.serving.oauth.settings import ClientCredentials, OAuthSettings

__all__ = ["ClientCredentials", "OAuthAccess", "OAuthSettings", "identity_of_access"]
