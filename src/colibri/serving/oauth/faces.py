"""What each face (`serve --http`, `switchboard --http`, `ui`) builds from its OAuth settings."""

from __future__ import annotations

from colibri.serving.oauth.settings import OAuthSettings
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.protected_resource import ProtectedResource


def oauth_verifier(settings: OAuthSettings | None, resource: str) -> OAuthVerifier | None:
    """The verifier of `settings` whose audience defaults to `resource` (the face's own URL)."""
    return None if settings is None else OAuthVerifier(settings.for_audience(resource))


def protected_resource(resource: str, settings: OAuthSettings | None) -> ProtectedResource:
    """The RFC 9728 metadata of `resource`: with an issuer, it names it and the scope names it maps."""
    if settings is None:
        return ProtectedResource(resource)
    return ProtectedResource(resource, settings.scopes, (settings.issuer,))
