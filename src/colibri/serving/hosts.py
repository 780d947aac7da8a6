"""Which names an HTTP face answers to: the loopback rule and the Host/Origin allow-list (SPEC §14).

A DNS-rebinding page reaches a server under the attacker's own name, so every request's Host
(and any Origin) must name this server. "Loopback" is 127.0.0.0/8, ::1 or `localhost`: a name
such as `127.attacker.example` is a name its owner points wherever they like.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or `localhost` (any case, brackets allowed); never any other name."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bracketed(host: str) -> str:
    """An IPv6 address as a URL or a Host header writes it."""
    return f"[{host}]" if ":" in host else host


def host_name(header: str | None) -> str:
    """The name in a Host header, lower-case, without brackets or port: `[::1]:80` → `::1`."""
    value = (header or "").strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """The names (lower-case, no port) a face answers to, whatever the port."""

    names: frozenset[str]

    @classmethod
    def for_bind(cls, host: str, extra: Iterable[str] = (), public_url: str | None = None) -> AllowedHosts:
        """The bind address itself (all loopback names for a loopback one; the loopback names and
        this machine's names for a wildcard), the `--allow-host` names and `--public-url`'s host."""
        if host in WILDCARD:
            names = [*LOOPBACK_NAMES, socket.gethostname(), socket.getfqdn()]
        elif is_loopback(host):
            names = [*LOOPBACK_NAMES, host]
        else:
            names = [host]
        names += [host_name(name) for name in extra]
        if public_url:
            names.append(urlsplit(public_url).hostname or "")
        return cls(frozenset(name.strip("[]").lower() for name in names if name))

    def allows_host(self, header: str | None) -> bool:
        return host_name(header) in self.names

    def allows_origin(self, origin: str | None) -> bool:
        """No Origin (not a browser, or a same-origin GET) passes; `null` and foreign origins do not."""
        if origin is None:
            return True
        parts = urlsplit(origin.strip())
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.names

    def transport_security(self) -> TransportSecuritySettings:
        """The same list in the SDK's own terms, so its check behind ours agrees with it."""
        shown = sorted(bracketed(name) for name in self.names)
        schemes = ("http", "https")
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:*" for name in shown] + shown,
            allowed_origins=[f"{scheme}://{name}:*" for name in shown for scheme in schemes]
            + [f"{scheme}://{name}" for name in shown for scheme in schemes],
        )
