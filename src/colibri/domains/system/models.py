from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from colibri.core.spec import Arguments, Model

ModeName = Literal["FULL", "READONLY", "TEST", "MINIMAL"]


class NoArguments(Arguments):
    """This tool takes no arguments; extra fields are ignored."""


class Ping(Model):
    version: str
    mode: ModeName
    uptime_ms: int = Field(ge=0)


class Health(Model):
    """Exactly six fields, nothing more (SPEC §3)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"]
    version: str
    uptime_ms: int = Field(ge=0)
    db_tables: int = Field(ge=0)
    phase: Literal["phase1", "phase2"]
    mode: ModeName
