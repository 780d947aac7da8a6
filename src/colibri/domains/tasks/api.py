"""What other domains may use of the task pipeline; nothing else of it is theirs to import."""

from __future__ import annotations

from colibri.domains.tasks.repository import task_exists

__all__ = ["task_exists"]
