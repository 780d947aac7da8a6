"""The text form of a response envelope (SPEC §1.6), the same for both programs."""

from __future__ import annotations

import json
from typing import Any


def to_json(envelope: dict[str, Any]) -> str:
    """Compact, key-sorted JSON: the text block clients read and the bytes the audit hashes."""
    return json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
