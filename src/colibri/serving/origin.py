"""Whether a form POST comes from one of this server's own pages (login CSRF, SPEC §14).

A page elsewhere can post a form to `/login` and so sign the visitor in under the attacker's
token. Browsers say where a request comes from: `Origin` on every cross-origin POST (and on
same-origin ones), `Sec-Fetch-Site` where they send no Origin. A request with neither is not
from a browser, and no visitor's session rides on it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers


def same_origin_post(headers: Headers, public_url: str | None = None) -> bool:
    """True for a POST from this server's own pages: its Origin names the Host the request was
    sent to, or `public_url` (the origin clients use behind a proxy)."""
    origin = headers.get("origin")
    if origin is None:
        return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False  # `null`: a sandboxed frame, a data: URL, a redirect across sites
    if parts.netloc == headers.get("host", "").strip().lower():
        return True
    if public_url:
        public = urlsplit(public_url.lower())
        return (parts.scheme, parts.netloc) == (public.scheme, public.netloc)
    return False
