from __future__ import annotations

from colibri.storage import Migration

MIGRATIONS: list[Migration] = []
