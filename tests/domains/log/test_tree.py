"""The stored tree: appends in the row's transaction, O(log n) rows per append and per proof,
and roots and proofs equal to RFC 9162's over a 2,000-entry log in a real SQLite file."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri.domains.log import rfc9162, tree
from colibri.domains.log.appends import log_record
from colibri.domains.proofs import merkle
from colibri.storage import Database, SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

LOG_SIZE = 2000


@pytest.fixture(scope="module")
def log_2000(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, list[bytes]]:
    db = SQLiteDatabase.open(tmp_path_factory.mktemp("log") / "log.db")
    migrate(db, MIGRATIONS)
    rng = random.Random(2000)
    entries = [rng.randbytes(32) for _ in range(LOG_SIZE)]
    with db.atomic() as conn:
        for i, entry in enumerate(entries):
            assert tree.append(conn, tree.RECORD, i + 1, entry) == i
    return db, entries


def test_each_complete_subtree_is_stored_once(log_2000: tuple[Database, list[bytes]]) -> None:
    db, _ = log_2000
    stored = db.execute("SELECT count(*) FROM log_nodes").fetchone()[0]
    assert stored == LOG_SIZE - LOG_SIZE.bit_count()  # complete subtrees of >= 2 leaves
    ids = [row[0] for row in db.execute("SELECT id FROM log_nodes ORDER BY rowid")]
    assert ids == sorted(ids)  # keys grow in creation order (post-order numbering)


def test_roots_match_rfc9162_at_every_size(log_2000: tuple[Database, list[bytes]]) -> None:
    db, entries = log_2000
    levels = merkle.build_levels([merkle.leaf_hash(e) for e in entries])
    for size in (*range(1, 70), 1023, 1024, 1025, 1999, 2000):
        assert tree.root(db, size) == merkle.tree_root(entries[:size])
    assert tree.root(db, LOG_SIZE) == levels[-1][0]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, LOG_SIZE))
def test_stored_proofs_for_every_index_and_pair_of_a_random_size_verify(
    log_2000: tuple[Database, list[bytes]], n: int
) -> None:
    db, entries = log_2000
    root = tree.root(db, n)
    for i in range(n):
        assert merkle.verify_inclusion(entries[i], i, n, tree.inclusion_path(db, i, n), root)
    for m in range(1, n + 1):
        proof = tree.consistency_proof(db, m, n)
        assert rfc9162.verify_consistency(m, n, tree.root(db, m), root, proof)


def test_a_proof_reads_o_log_n_rows(log_2000: tuple[Database, list[bytes]]) -> None:
    db, _ = log_2000
    reads = 0

    def count(*_: object) -> None:
        nonlocal reads
        reads += 1

    db.conn.set_trace_callback(count)
    try:
        tree.inclusion_path(db, 1234, 1999)
        tree.consistency_proof(db, 777, 1999)
        tree.root(db, 1999)
    finally:
        db.conn.set_trace_callback(None)
    assert reads <= 3 * 2 * 11  # three answers, at most ~2 subtrees per level of an 11-level tree


def test_the_entry_rolls_back_with_its_row(fresh_db: Database) -> None:
    def failing_write() -> None:
        with fresh_db.atomic() as conn:
            log_record(conn, 1, "ab" * 32)
            raise RuntimeError("the handler failed")

    with pytest.raises(RuntimeError):
        failing_write()
    assert tree.size(fresh_db) == 0
    assert fresh_db.execute("SELECT count(*) FROM log_nodes").fetchone()[0] == 0


def test_a_missing_stored_node_is_reported_not_guessed(tmp_path: Path) -> None:
    db = SQLiteDatabase.open(tmp_path / "gap.db")
    migrate(db, MIGRATIONS)
    with db.atomic() as conn:
        for i in range(8):
            tree.append(conn, tree.RECORD, i + 1, bytes([i]) * 32)
    db.execute("DELETE FROM log_nodes WHERE id = (SELECT max(id) FROM log_nodes)")
    with pytest.raises(LookupError, match="lacks the subtree"):
        tree.root(db, 8)
    db.close()


def test_the_log_and_a_raw_connection_agree_on_the_schema(fresh_db: Database) -> None:
    conn = sqlite3.connect(fresh_db.path)
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    assert {"log_entries", "log_nodes", "log_checkpoints", "log_meta"} <= names
