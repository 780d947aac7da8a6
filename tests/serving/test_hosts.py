"""The loopback rule and the Host/Origin allow-list every HTTP face checks (SPEC §14)."""

from __future__ import annotations

import socket

import pytest

from colibri.serving.hosts import AllowedHosts, host_name, is_loopback
from colibri.serving.http import security_for


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.5.6.7", "127.255.255.254", "::1", "[::1]", "localhost", "LocalHost"]
)
def test_loopback_is_127_slash_8_the_ipv6_one_and_localhost(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["127.attacker.example", "127.0.0.1.nip.io", "localhost.example", "0.0.0.0", "::", "10.0.0.1", ""]
)
def test_a_name_that_merely_starts_like_loopback_is_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("header", "name"),
    [("[::1]:8080", "::1"), ("Example.COM:80", "example.com"), ("a.b", "a.b"), ("::1", "::1"), (None, "")],
)
def test_the_name_of_a_host_header(header: str | None, name: str) -> None:
    assert host_name(header) == name


def test_a_loopback_bind_answers_every_loopback_name_on_any_port() -> None:
    hosts = AllowedHosts.for_bind("127.0.0.1")
    for header in ("127.0.0.1:8765", "localhost:1", "[::1]:80", "localhost"):
        assert hosts.allows_host(header), header
    for header in ("evil.example", "evil.example:8765", "127.attacker.example:8765", "", None):
        assert not hosts.allows_host(header), header


def test_a_wildcard_bind_allows_the_loopback_names_and_this_machine_only() -> None:
    hosts = AllowedHosts.for_bind("0.0.0.0")
    assert hosts.allows_host(f"{socket.gethostname()}:80") and hosts.allows_host("localhost:9")
    assert not hosts.allows_host("evil.example:80")
    settings = security_for("0.0.0.0")
    assert settings.enable_dns_rebinding_protection
    for name in ("127.0.0.1:*", "localhost:*", "[::1]:*", f"{socket.gethostname().lower()}:*"):
        assert name in settings.allowed_hosts
    assert "http://localhost:*" in settings.allowed_origins
    assert not any("evil" in host for host in settings.allowed_hosts)


def test_extra_names_and_the_public_urls_host_are_allowed() -> None:
    hosts = AllowedHosts.for_bind(
        "10.0.0.5",
        ["colibri.example.com", "[fd00::5]", "alias.example:8443"],
        "https://Proxy.Example.org/base",
    )
    assert hosts.names == {"10.0.0.5", "colibri.example.com", "fd00::5", "alias.example", "proxy.example.org"}
    assert not hosts.allows_host("localhost:80")
    settings = security_for("10.0.0.5", ["colibri.example.com"])
    assert {"10.0.0.5:*", "colibri.example.com:*", "colibri.example.com"} <= set(settings.allowed_hosts)
    assert "https://colibri.example.com" in settings.allowed_origins
    assert "localhost:*" not in settings.allowed_hosts


def test_an_origin_must_be_http_or_https_on_an_allowed_name() -> None:
    hosts = AllowedHosts.for_bind("127.0.0.1")
    assert hosts.allows_origin(None)
    assert hosts.allows_origin("http://127.0.0.1:8765") and hosts.allows_origin("https://localhost")
    for origin in (
        "null",
        "http://evil.example",
        "http://127.attacker.example:8765",
        "file://",
        "ftp://localhost",
    ):
        assert not hosts.allows_origin(origin), origin
