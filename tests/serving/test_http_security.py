"""DNS-rebinding settings per bind address: loopback names for a wildcard bind, extras on request."""

from __future__ import annotations

import socket

from colibri.serving.http import is_loopback, security_for


def test_loopback_keeps_the_sdk_defaults() -> None:
    assert security_for("127.0.0.1") is None
    assert is_loopback("127.0.0.1") and is_loopback("::1") and not is_loopback("0.0.0.0")


def test_a_wildcard_bind_allows_the_loopback_names_and_this_machine() -> None:
    settings = security_for("0.0.0.0")
    assert settings is not None and settings.enable_dns_rebinding_protection
    for name in ("127.0.0.1:*", "localhost:*", "[::1]:*", f"{socket.gethostname()}:*"):
        assert name in settings.allowed_hosts
    assert "http://localhost:*" in settings.allowed_origins
    assert not any("evil" in host for host in settings.allowed_hosts)


def test_extra_hosts_are_allowed_with_and_without_a_port() -> None:
    settings = security_for("10.0.0.5", ["colibri.example.com"])
    assert settings is not None
    assert {"10.0.0.5:*", "colibri.example.com:*", "colibri.example.com"} <= set(settings.allowed_hosts)
    assert "https://colibri.example.com" in settings.allowed_origins
    assert "localhost:*" not in settings.allowed_hosts
