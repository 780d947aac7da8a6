"""The leaf hashes of a range of log entries, read in one query and hashed in C.

The log-only pass (`colibri verify --checkpoint`, SPEC §25) reads nothing but the entry hashes,
so the store hands them over joined into one byte string, each already prefixed with RFC
9162's leaf byte 0x00: one value per range instead of a Python tuple per entry, and the slicing
into 33-byte leaf inputs is done by struct in C. The same query counts the rows and those that
are 32-byte blobs, so a missing entry or a hash stored as anything else fails the range.
"""

from __future__ import annotations

import hashlib
import struct
from operator import itemgetter, methodcaller

from colibri.core.database import Connection

_LEAF_INPUT = struct.Struct("33s")  # 0x00 ‖ the 32-byte entry hash
_sha256 = hashlib.sha256
_digest = methodcaller("digest")
_only = itemgetter(0)
BATCH = 1 << 16

# The subquery's ORDER BY is kept (SQLite never flattens an ordered subquery into an aggregate),
# so group_concat joins in index order; it copies a blob's bytes as they are, NULs included.
_SQLITE = (
    "SELECT count(*), sum(typeof(entry_hash) = 'blob' AND length(entry_hash) = 32),"
    " CAST(group_concat(X'00' || entry_hash, '') AS BLOB)"
    " FROM (SELECT entry_hash FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx)"
)
_POSTGRES = (
    "SELECT count(*), count(*) FILTER (WHERE length(entry_hash) = 32),"
    " string_agg('\\x00'::bytea || entry_hash, ''::bytea ORDER BY idx)"
    " FROM log_entries WHERE idx >= ? AND idx < ?"
)


def entry_leaves(conn: Connection, lo: int, hi: int) -> list[bytes] | None:
    """SHA-256(0x00 ‖ entry) of entries lo..hi-1 in index order; None when one of them is missing
    or is not a 32-byte hash (idx is the key: hi - lo rows in [lo, hi) are all of them)."""
    sql = _SQLITE if conn.dialect.name == "sqlite" else _POSTGRES
    leaves: list[bytes] = []
    # A value per BATCH entries (2 MiB): far below SQLite's 1 GB limit on one value, whatever the range.
    for start in range(lo, hi, BATCH):
        end = min(start + BATCH, hi)
        count, well_formed, joined = conn.tuples(sql, (start, end)).fetchone()
        if count != end - start or well_formed != count or joined is None:
            return None
        data = bytes(joined)  # PostgreSQL hands a bytea over as a memoryview
        if len(data) != 33 * count:
            return None
        leaves += map(_digest, map(_sha256, map(_only, _LEAF_INPUT.iter_unpack(data))))
    return leaves
