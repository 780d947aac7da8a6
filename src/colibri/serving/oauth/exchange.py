"""The switchboard as a client of the identity provider's token endpoint (SPEC §20, "Identity
through the gateway"): RFC 8693 token exchange of a caller's access token for one whose audience is
a downstream, and a client-credentials token of its own for what no caller asked.

The client authenticates with `auth.oauth.client_id`/`client_secret` (HTTP Basic, each part
form-urlencoded first, RFC 6749 §2.3.1). The audience is named as `resource` (RFC 8707: the
downstream's URL); no `scope` is asked in an exchange, so the exchanged token carries at most the
caller's own. A refusal names the provider's `error` and `error_description`, never a token.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx2

from colibri.core.shown import shown
from colibri.serving.oauth.issuer import Issuer, IssuerUnavailable
from colibri.serving.oauth.settings import ClientCredentials

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
TIMEOUT_S = 10.0
# A token is used until this long before it expires (or half its life, when that is shorter), so a
# request sent with it does not arrive with it expired.
MARGIN_S = 30.0


class TokenRefused(Exception):
    """The token endpoint gave no token; the message says why (the provider's error, or the network)."""


@dataclass(frozen=True, slots=True)
class Granted:
    """An access token the provider issued, and when to stop using it (monotonic seconds)."""

    token: str = field(repr=False)
    use_until: float


class TokenEndpoint:
    """One issuer's token endpoint, asked as the switchboard's own client."""

    def __init__(
        self, issuer: Issuer, client: ClientCredentials, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._issuer = issuer
        self._client = client
        self._clock = clock

    async def exchange(self, subject_token: str, resource: str) -> Granted:
        """RFC 8693: `subject_token` (a caller's access token) for one whose audience is `resource`."""
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject_token,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
            "resource": resource,
        }
        try:
            return await self._grant(form)
        except TokenRefused as exc:
            # Whatever the provider says back, the caller's token is not repeated.
            raise TokenRefused(str(exc).replace(subject_token, "<the caller's token>")) from None

    async def client_credentials(self, resource: str, scope: str) -> Granted:
        """The switchboard's own token for `resource` (its principal: the switchboard's client)."""
        return await self._grant({"grant_type": "client_credentials", "resource": resource, "scope": scope})

    async def _grant(self, form: dict[str, str]) -> Granted:
        try:
            endpoint = (await self._issuer.metadata()).token_endpoint
        except IssuerUnavailable as exc:
            raise TokenRefused(f"the identity provider cannot be reached: {exc}") from None
        if endpoint is None:
            raise TokenRefused(f"the identity provider {self._issuer.issuer} names no token_endpoint")
        auth = (quote(self._client.client_id, safe=""), quote(self._client.client_secret, safe=""))
        started = self._clock()
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT_S) as http:
                answer = await http.post(endpoint, data=form, auth=auth)
            body = answer.json() if answer.content else {}
        except (httpx2.HTTPError, ValueError) as exc:
            raise TokenRefused(f"POST {endpoint}: {type(exc).__name__}: {exc}") from None
        if not isinstance(body, dict):
            raise TokenRefused(f"POST {endpoint}: {answer.status_code}, not a JSON object")
        token = body.get("access_token")
        if answer.status_code != 200 or not isinstance(token, str) or not token:
            raise TokenRefused(_refusal(endpoint, answer.status_code, body))
        expires_in = body.get("expires_in")
        # Without expires_in (RFC 6749 §5.1 only recommends it) the token serves this request alone.
        life = float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else 0.0
        return Granted(token, started + life - min(MARGIN_S, life / 2))


def _refusal(endpoint: str, status: int, body: dict[str, object]) -> str:
    error, description = body.get("error"), body.get("error_description")
    said = _line(str(error), 80) if error else f"HTTP {status}"
    if description:
        said += f" ({_line(str(description), 200)})"
    return f"{endpoint} refused: {said}"


def _line(text: str, longest: int) -> str:
    cut = text if len(text) <= longest else text[: longest - 3] + "..."
    return shown(cut, longest=longest)
