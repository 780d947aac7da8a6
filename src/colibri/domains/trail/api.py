"""What other domains may use of the decision trail; nothing else of it is theirs to import."""

from __future__ import annotations

from colibri.domains.trail.canonical import RECORD_ID_PATTERN, record_json, stored_record_hash
from colibri.domains.trail.repository import (
    RecordRef,
    count_records,
    find_record,
    has_writeback,
    record_hashes,
    record_seqs,
    stored_hash_bytes,
)
from colibri.domains.trail.text import Text

__all__ = [
    "RECORD_ID_PATTERN",
    "RecordRef",
    "Text",
    "count_records",
    "find_record",
    "has_writeback",
    "record_hashes",
    "record_json",
    "record_seqs",
    "stored_hash_bytes",
    "stored_record_hash",
]
