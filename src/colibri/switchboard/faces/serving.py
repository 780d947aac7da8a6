"""How the switchboard was asked to serve: the options the command line settled."""

from __future__ import annotations

from dataclasses import dataclass, field

from colibri.pipes import LINE_LIMIT
from colibri.serving.http_limits import HttpLimits
from colibri.serving.oauth import OAuthSettings


@dataclass(frozen=True, slots=True)
class Serving:
    config_path: str
    http: tuple[str, int] | None = None
    metrics: tuple[str, int] | None = None
    tokens: str | None = None  # the tokens file; None serves HTTP without tokens (loopback only)
    oauth: OAuthSettings | None = None  # `auth.oauth`: the identity provider's tokens (SPEC §20)
    watch: bool = False
    message_limit: int = LINE_LIMIT  # COLIBRI_MAX_MESSAGE_BYTES
    http_limits: HttpLimits = field(default_factory=HttpLimits)  # COLIBRI_HTTP_*
