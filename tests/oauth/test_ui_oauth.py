"""`colibri ui` takes the identity provider's access tokens beside Colibri's own (SPEC §20): as
`Authorization: Bearer` or entered in its sign-in form; its RFC 9728 metadata names the issuer."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

from tests.helpers.static_issuer import static_issuer
from tests.http.helpers import get, http_env, make_token
from tests.ui.browser import ui_process


def _sign_in(base: str, token: str) -> tuple[int, str]:
    """POST the sign-in form as the ui's own page would; the status and where it sends the browser."""
    body = urllib.parse.urlencode({"token": token, "next": "/audit"}).encode()
    request = urllib.request.Request(f"{base}/login", data=body, headers={"Origin": base}, method="POST")

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(Stay)
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.headers.get("location", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("location", "")


def test_the_ui_takes_the_providers_tokens_beside_its_own(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "viewer", "read")  # the store exists, and Colibri's tokens keep working
    with static_issuer() as issuer, ui_process(env, tmp_path, "--oauth-issuer", issuer.issuer) as (base, _):
        reader = issuer.token(base, scope="colibri:read", email="ana@example.com")
        status, _, page = get(f"{base}/", {"Authorization": f"Bearer {reader}"})
        assert status == 200 and b'name="token"' not in page  # the board, not the sign-in form
        no_scope = issuer.token(base, scope="openid")
        expired = issuer.token(base, exp=1)
        for refused in (no_scope, expired, issuer.token("http://elsewhere/mcp")):
            status, _, page = get(f"{base}/", {"Authorization": f"Bearer {refused}"})
            assert b'name="token"' in page, (status, page[:300])  # sent to the sign-in form
        assert _sign_in(base, reader) == (303, "/audit")
        assert _sign_in(base, expired)[0] == 401
        status, _, body = get(f"{base}/.well-known/oauth-protected-resource")
        document = json.loads(body)
        assert status == 200 and document["authorization_servers"] == [issuer.issuer]
        assert document["resource"] == base
