"""`"identity": "exchange"` on a server entry (SPEC §20, "Identity through the gateway"): each
caller's token is exchanged at `auth.oauth`'s issuer, as the switchboard's own client there, for one
whose audience is that server (downstream/exchange.py). Only a `url` entry may say so, only with
`auth.oauth`'s `client_id` and `client_secret`, and never beside an `Authorization` header of its own.
"""

from __future__ import annotations

from colibri.serving.oauth import OAuthSettings
from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.schema import RawServer


def exchange_settings(
    where: tuple[str, str], entry: RawServer, oauth: OAuthSettings | None
) -> OAuthSettings | None:
    """`"identity": "exchange"` (SPEC §20): the settings a caller's token is exchanged with, checked."""
    if entry.identity is None:
        return None
    at = json_path((*where, "identity"))
    if entry.url is None:
        raise ConfigError(at, 'applies to "url" servers only: a token is exchanged for an HTTP server')
    if entry.type == "sse":
        raise ConfigError(at, 'applies to Streamable HTTP servers only, not to "type": "sse"')
    if oauth is None or oauth.client is None:
        raise ConfigError(
            at,
            'needs "auth": {"oauth": {"issuer", "client_id", "client_secret"}}: the switchboard exchanges '
            "each caller's token at that issuer as that client",
        )
    for key in entry.headers:
        if key.lower() != "authorization":
            continue
        raise ConfigError(
            json_path((*where, "headers", key)),
            'not with "identity": "exchange", which sends each call\'s own exchanged token',
        )
    return oauth
