"""A sign-in form is accepted only from this server's own pages (login CSRF, SPEC §14)."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from colibri.serving.origin import same_origin_post

HOST = "127.0.0.1:8765"


@pytest.mark.parametrize(
    "headers",
    [
        {"host": HOST, "origin": f"http://{HOST}"},
        {"host": "colibri.example", "origin": "https://colibri.example"},  # TLS ends at a proxy
        {"host": HOST, "sec-fetch-site": "same-origin"},  # a browser that sent no Origin
        {"host": HOST, "sec-fetch-site": "none"},  # typed in the address bar
        {"host": HOST},  # not a browser (curl, a script): no visitor's cookie rides on it
    ],
)
def test_our_own_form_and_non_browsers_may_post(headers: dict[str, str]) -> None:
    assert same_origin_post(Headers(headers))


@pytest.mark.parametrize(
    "headers",
    [
        {"host": HOST, "origin": "http://evil.example"},
        {"host": HOST, "origin": "http://127.0.0.1:9999"},  # another local app, another origin
        {"host": HOST, "origin": "null"},  # a sandboxed frame or a data: URL
        {"host": HOST, "sec-fetch-site": "cross-site"},
        {"host": HOST, "sec-fetch-site": "same-site"},
    ],
)
def test_a_post_from_another_site_is_refused(headers: dict[str, str]) -> None:
    assert not same_origin_post(Headers(headers))


def test_the_public_urls_origin_may_post_behind_a_proxy_that_rewrites_the_host() -> None:
    headers = Headers({"host": "10.0.0.5:8080", "origin": "https://colibri.example"})
    assert same_origin_post(headers, "https://colibri.example/")
    assert not same_origin_post(headers, "http://colibri.example/")
    assert not same_origin_post(headers)
