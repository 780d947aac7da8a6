"""The server's live state: what `server_ping` and `server_health` read."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from colibri.runtime.modes import Mode
from colibri.storage import Database

if TYPE_CHECKING:
    from colibri.domains.log.notary import Notary

Phase = Literal["phase1", "phase2"]


@dataclass(slots=True)
class ServerState:
    """Boot clock, version, the declared mode and what phase 2 made of it."""

    version: str
    declared_mode: Mode
    skills_dirs: tuple[Path, ...] | None = None  # COLIBRI_SKILLS_DIR; None means the default roots
    boot_start: float = field(default_factory=time.monotonic)
    phase: Phase = "phase1"
    # Until phase 2 succeeds only the system tools are admitted; it never widens silently.
    mode: Mode = Mode.MINIMAL
    db: Database | None = None
    boot_error: str | None = None
    notary: Notary | None = None  # signs log checkpoints; set by phase 2 where writes are allowed

    def uptime_ms(self) -> int:
        return max(0, int((time.monotonic() - self.boot_start) * 1000))
