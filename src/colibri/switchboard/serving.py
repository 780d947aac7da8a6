"""How the switchboard was asked to serve: the options the command line settled."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Serving:
    config_path: str
    http: tuple[str, int] | None = None
    metrics: tuple[str, int] | None = None
    tokens: str | None = None  # the tokens file; None serves HTTP without tokens (loopback only)
    watch: bool = False
