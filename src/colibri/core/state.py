"""The server's live state: what `server_ping` and `server_health` read."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from colibri.core.database import Connection, Database
from colibri.core.modes import Mode

Phase = Literal["phase1", "phase2"]


class SignedCheckpoint(Protocol):
    """A checkpoint of the verifiable log as stored: its tree size and its signed note."""

    @property
    def size(self) -> int: ...

    @property
    def note(self) -> str: ...


class Checkpointer(Protocol):
    """Signs checkpoints of the verifiable log (implemented by domains/log/notary.py's Notary)."""

    def make(self, conn: Connection, reason: str, session_id: str | None = None) -> SignedCheckpoint: ...

    def make_if_grown(self, conn: Connection, reason: str) -> SignedCheckpoint | None: ...


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
    # Counted once the schema is final (end of phase 2): health answers without touching the
    # database, so a lock held by another process never delays it.
    db_tables: int = 0
    boot_error: str | None = None  # shown to clients: no absolute paths
    # Signs log checkpoints; set by phase 2 where writes are allowed (domains/log/notary.py).
    notary: Checkpointer | None = None

    @property
    def reported_mode(self) -> Mode:
        """The mode health shows: the declared one while phase 2 is still under way, so that
        "still starting" (declared mode, phase1) and "boot failed" (MINIMAL, phase1) never look alike."""
        if self.phase == "phase1" and self.boot_error is None:
            return self.declared_mode
        return self.mode

    def uptime_ms(self) -> int:
        return max(0, int((time.monotonic() - self.boot_start) * 1000))
