"""A sealed Merkle tree on disk, so an inclusion proof costs one probe per level.

Each level is stored in chunks of CHUNK concatenated 32-byte hashes (`merkle_nodes`), and the
leaf order in chunks of CHUNK little-endian 64-bit seqs (`merkle_leaves`). Building a proof
for a 100,000-leaf session then reads ~17 small chunks instead of 100,000 record hashes.
"""

from __future__ import annotations

import bisect
import itertools
import struct
from collections.abc import Iterator

from colibri.domains.proofs.merkle import HASH_SIZE, sibling_positions
from colibri.storage import Connection

CHUNK = 128


def save_tree(conn: Connection, session_id: str, levels: list[list[bytes]], seqs: list[int]) -> None:
    """Store every level of a sealed tree and the seq of each of its leaves."""
    conn.executemany(
        "INSERT INTO merkle_nodes (session_id, level, chunk, hashes) VALUES (?, ?, ?, ?)",
        ((session_id, *row) for row in node_rows(levels)),
    )
    conn.executemany(
        "INSERT INTO merkle_leaves (session_id, chunk, first_seq, seqs) VALUES (?, ?, ?, ?)",
        ((session_id, *row) for row in leaf_rows(seqs)),
    )


def node_rows(levels: list[list[bytes]]) -> Iterator[tuple[int, int, bytes]]:
    """The (level, chunk, hashes) rows that store `levels`, in (level, chunk) order."""
    for level, nodes in enumerate(levels):
        for start in range(0, len(nodes), CHUNK):
            yield level, start // CHUNK, b"".join(nodes[start : start + CHUNK])


def leaf_rows(seqs: list[int]) -> Iterator[tuple[int, int, bytes]]:
    """The (chunk, first_seq, seqs) rows that store the leaf order, in chunk order."""
    for start in range(0, len(seqs), CHUNK):
        yield start // CHUNK, seqs[start], _pack(seqs[start : start + CHUNK])


def tree_matches(conn: Connection, session_id: str, levels: list[list[bytes]], seqs: list[int]) -> bool:
    """True when the stored tree of the session is exactly the one `levels` and `seqs` make:
    every node, every leaf seq, no row missing and none extra."""
    stored_nodes = conn.execute(
        "SELECT level, chunk, hashes FROM merkle_nodes WHERE session_id = ? ORDER BY level, chunk",
        (session_id,),
    )
    stored_leaves = conn.execute(
        "SELECT chunk, first_seq, seqs FROM merkle_leaves WHERE session_id = ? ORDER BY chunk", (session_id,)
    )
    for stored, expected in (
        (stored_nodes, node_rows(levels)),
        (stored_leaves, leaf_rows(seqs)),
    ):
        for got, want in itertools.zip_longest(stored, expected):
            if got is None or want is None or tuple(got) != want:
                return False
    return True


def leaf_index(conn: Connection, session_id: str, seq: int) -> int | None:
    """The 0-based leaf position of record `seq` in the session's sealed tree, if it is a leaf."""
    row = conn.execute(
        "SELECT chunk, seqs FROM merkle_leaves WHERE session_id = ? AND first_seq <= ?"
        " ORDER BY first_seq DESC LIMIT 1",
        (session_id, seq),
    ).fetchone()
    if row is None:
        return None
    chunk, packed = row[0], row[1]
    seqs = _unpack(packed)
    position = bisect.bisect_left(seqs, seq)
    if position == len(seqs) or seqs[position] != seq:
        return None
    return int(chunk) * CHUNK + position


def audit_path(conn: Connection, session_id: str, tree_size: int, index: int) -> list[bytes]:
    """The sibling hashes of leaf `index`, from the leaf upward, read from the stored levels."""
    positions = sibling_positions(tree_size, index)
    if not positions:
        return []
    wanted = {(level, position // CHUNK) for level, position in positions}
    pairs = ", ".join("(?, ?)" for _ in wanted)
    params: list[object] = [session_id]
    for level, chunk in wanted:
        params += [level, chunk]
    chunks = {
        (row[0], row[1]): row[2]
        for row in conn.execute(
            f"SELECT level, chunk, hashes FROM merkle_nodes WHERE session_id = ? AND (level, chunk) IN"
            f" (VALUES {pairs})",
            params,
        )
    }
    path = []
    for level, position in positions:
        blob = chunks.get((level, position // CHUNK))
        offset = (position % CHUNK) * HASH_SIZE
        node = b"" if blob is None else bytes(blob[offset : offset + HASH_SIZE])
        if len(node) != HASH_SIZE:
            raise LookupError(
                f"stored tree of session {session_id} lacks node {position} of level {level};"
                " run audit_verify_chain on the session"
            )
        path.append(node)
    return path


def _pack(seqs: list[int]) -> bytes:
    return struct.pack(f"<{len(seqs)}q", *seqs)


def _unpack(packed: bytes) -> tuple[int, ...]:
    return struct.unpack(f"<{len(packed) // 8}q", packed)
