"""Sessions, seals and proofs on a real SQLite file."""

from __future__ import annotations

import re

import pytest

from colibri.core.errors import DomainError
from colibri.domains.proofs import merkle, repository, sessions, tree_store
from colibri.domains.proofs.seals import check_seal, leaf_of_stored
from colibri.domains.trail import records
from colibri.domains.trail.verify import verify
from colibri.storage import Database
from colibri.verifier.offline import run_verify
from tests.domains.trail.helpers import build_chain, raw_connection


def _refused(code: str) -> pytest.RaisesExc[DomainError]:
    return pytest.raises(DomainError, match=f"^{code}: ")


def test_sessions_start_with_a_given_or_generated_id_and_never_twice(fresh_db: Database) -> None:
    given = sessions.start(fresh_db, "review-42", "agent-1", "a review")
    assert given.session_id == "review-42" and given.started_at.endswith("Z")
    generated = {sessions.start(fresh_db, None).session_id for _ in range(5)}
    assert len(generated) == 5 and all(re.fullmatch(r"session-[0-9a-f]{16}", s) for s in generated)
    with _refused("ERR_SESSION_EXISTS") as caught:
        sessions.start(fresh_db, "review-42")
    assert given.started_at in caught.value.message and "omit it" in caught.value.message
    stored = repository.get_session(fresh_db, "review-42")
    assert stored is not None and (stored.agent_id, stored.purpose, stored.seal) == (
        "agent-1",
        "a review",
        None,
    )


def test_finalize_refuses_unknown_empty_and_already_sealed_sessions(fresh_db: Database) -> None:
    with _refused("ERR_SESSION_NOT_FOUND") as caught:
        sessions.finalize(fresh_db, "ghost")
    assert "audit_session_start" in caught.value.message
    sessions.start(fresh_db, "empty")
    with _refused("ERR_NO_RECORDS") as caught:
        sessions.finalize(fresh_db, "empty")
    assert "thought_record" in caught.value.message
    records.append(fresh_db, "empty", "plan", "now it has one")
    sealed = sessions.finalize(fresh_db, "empty")
    with _refused("ERR_ALREADY_FINALIZED") as caught:
        sessions.finalize(fresh_db, "empty")
    assert sealed.root in caught.value.message and caught.value.details["root"] == sealed.root


def test_the_seal_is_the_rfc9162_root_of_the_record_hashes_in_seq_order(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 20, session_count=2)
    sealed = sessions.finalize(fresh_db, ids[1])
    hashes = [
        row[0]
        for row in fresh_db.execute(
            "SELECT hash FROM thought_records WHERE session_id = ? ORDER BY seq", (ids[1],)
        )
    ]
    assert sealed.leaf_count == 10
    assert sealed.root == merkle.tree_root([bytes.fromhex(h) for h in hashes]).hex()
    answer = sessions.root(fresh_db, ids[1])
    assert (answer.root, answer.leaf_count, answer.finalized_at, answer.algorithm, answer.proof) == (
        sealed.root,
        10,
        sealed.finalized_at,
        "rfc9162-sha256",
        None,
    )


def test_every_record_of_a_large_interleaved_session_gets_a_verifying_proof(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 900, session_count=3)  # 300 leaves: three leaf chunks, seqs 1, 4, 7, ...
    sealed = sessions.finalize(fresh_db, ids[0])
    rows = fresh_db.execute(
        "SELECT record_id, hash FROM thought_records WHERE session_id = ? ORDER BY seq", (ids[0],)
    ).fetchall()
    levels = merkle.build_levels([merkle.leaf_hash(bytes.fromhex(row["hash"])) for row in rows])
    for index, row in enumerate(rows):
        proof = sessions.root(fresh_db, ids[0], row["record_id"]).proof
        assert proof is not None
        assert (proof.leaf_index, proof.tree_size, proof.record_hash) == (index, 300, row["hash"])
        assert proof.audit_path == [node.hex() for node in merkle.inclusion_path(levels, index)]
        assert merkle.verify_proof(proof.model_dump(), sealed.root)


def test_roots_and_proofs_are_refused_with_the_reason(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 6, session_count=2)
    with _refused("ERR_SESSION_NOT_FOUND"):
        sessions.root(fresh_db, "ghost")
    with _refused("ERR_NOT_FINALIZED") as caught:
        sessions.root(fresh_db, ids[0])
    assert "3 record(s)" in caught.value.message and "merkle_finalize" in caught.value.message
    sessions.finalize(fresh_db, ids[0])
    other = fresh_db.execute(
        "SELECT record_id FROM thought_records WHERE session_id = ?", (ids[1],)
    ).fetchone()[0]
    with _refused("ERR_NOT_FOUND") as caught:
        sessions.root(fresh_db, ids[0], other)
    assert f"belongs to session {ids[1]!r}" in caught.value.message
    with _refused("ERR_NOT_FOUND") as caught:
        sessions.root(fresh_db, ids[0], "rec_" + "0" * 24)
    assert "thought_record_list" in caught.value.message


def test_a_damaged_stored_hash_cannot_be_sealed(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 4, session_count=1)
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET hash = 'not hex' WHERE seq = 3")
    conn.close()
    with _refused("ERR_CHAIN_BROKEN") as caught:
        sessions.finalize(fresh_db, ids[0])
    assert "seq 3" in caught.value.message and "audit_verify_chain" in caught.value.message
    assert repository.get_session(fresh_db, ids[0]).seal is None  # type: ignore[union-attr]


def test_a_seal_check_compares_the_stored_hashes_with_the_sealed_root(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 8, session_count=2)
    sessions.finalize(fresh_db, ids[0])
    seal = repository.get_session(fresh_db, ids[0]).seal  # type: ignore[union-attr]
    assert seal is not None and check_seal(fresh_db, ids[0], seal).valid
    conn = raw_connection(fresh_db)
    conn.execute("DELETE FROM thought_records WHERE seq = 3")
    conn.close()
    damaged = check_seal(fresh_db, ids[0], seal)
    assert not damaged.valid and (damaged.sealed_leaf_count, damaged.computed_leaf_count) == (4, 3)


def test_leaf_data_is_the_32_raw_bytes_of_a_well_formed_hash_only() -> None:
    digest = "ab" * 32
    assert leaf_of_stored(digest) == merkle.leaf_hash(bytes.fromhex(digest))
    assert leaf_of_stored(digest.encode()) == merkle.leaf_hash(bytes.fromhex(digest))
    for damaged in (digest.upper(), "ab " * 21 + "a", digest[:-1] + "\udcff", digest[:-2]):
        assert leaf_of_stored(damaged) != merkle.leaf_hash(bytes.fromhex(digest))


def test_stored_paths_match_paths_built_in_memory_across_chunk_edges(fresh_db: Database) -> None:
    size = tree_store.CHUNK * 2 + 3
    leaves = [merkle.leaf_hash(bytes([i % 256, i // 256])) for i in range(size)]
    levels = merkle.build_levels(leaves)
    sessions.start(fresh_db, "s")
    with fresh_db.atomic() as conn:
        repository.insert_seal(conn, "s", repository.Seal(levels[-1][0].hex(), size, "now"))
        tree_store.save_tree(conn, "s", levels, [10 * i + 5 for i in range(size)])
    for index in (0, 1, 127, 128, 129, 255, 256, size - 1):
        assert tree_store.audit_path(fresh_db, "s", size, index) == merkle.inclusion_path(levels, index)
        assert tree_store.leaf_index(fresh_db, "s", 10 * index + 5) == index
    assert tree_store.leaf_index(fresh_db, "s", 4) is None
    assert tree_store.leaf_index(fresh_db, "s", 16) is None
    assert tree_store.leaf_index(fresh_db, "s", 10 * size + 5) is None


def _sealed_with_proofs(db: Database) -> tuple[str, list[str]]:
    """A sealed session of 10 records (others interleaved), and its record ids in order."""
    ids = build_chain(db, 20, session_count=2, seal=1)
    record_ids = [
        row[0] for row in db.execute("SELECT record_id FROM thought_records WHERE session_id = ?", (ids[0],))
    ]
    for record_id in record_ids:
        sessions.root(db, ids[0], record_id)  # every proof is served while the store is intact
    return ids[0], record_ids


@pytest.mark.parametrize(
    "damage",
    [
        # leaf 1's stored hash zeroed: it is on leaf 0's audit path
        "UPDATE merkle_nodes SET hashes = {cast}substr(hashes, 1, 32) || {zeros} || substr(hashes, 65){end}"
        " WHERE level = 0",
        "DELETE FROM merkle_nodes WHERE level = 1",  # a whole stored level gone
        # leaf order: the first two seqs exchanged, so leaf 0's seq maps to index 1
        "UPDATE merkle_leaves SET seqs"
        " = {cast}substr(seqs, 9, 8) || substr(seqs, 1, 8) || substr(seqs, 17){end}",
    ],
)
def test_a_damaged_stored_tree_is_a_seal_mismatch_and_its_proofs_are_refused(
    fresh_db: Database, damage: str
) -> None:
    session_id, record_ids = _sealed_with_proofs(fresh_db)
    seal = repository.get_session(fresh_db, session_id).seal  # type: ignore[union-attr]
    assert seal is not None and check_seal(fresh_db, session_id, seal).stored_tree_intact
    conn = raw_connection(fresh_db)
    # Byte strings are BLOBs in SQLite (|| makes text of them) and BYTEA in PostgreSQL.
    if fresh_db.dialect.name == "sqlite":
        conn.execute(damage.format(cast="CAST(", end=" AS BLOB)", zeros="zeroblob(32)"))
    else:
        conn.execute(damage.format(cast="", end="", zeros="decode(repeat('00', 32), 'hex')"))
    conn.close()

    check = check_seal(fresh_db, session_id, seal)
    assert not check.stored_tree_intact and not check.valid
    assert check.computed_root == check.sealed_root  # the records are intact: only the tree is damaged
    report = verify(fresh_db, session_id=session_id)
    assert report.first_break is None and not report.valid and not report.seals[0].stored_tree_intact

    with _refused("ERR_PROOF_STORE_DAMAGED") as caught:
        sessions.root(fresh_db, session_id, record_ids[0])
    assert "audit_verify_chain" in caught.value.message and "colibri verify" in caught.value.message
    assert caught.value.details == {"session_id": session_id, "record_id": record_ids[0]}


def test_an_extra_stored_chunk_is_a_seal_mismatch(fresh_db: Database) -> None:
    session_id, _ = _sealed_with_proofs(fresh_db)
    conn = raw_connection(fresh_db)
    conn.execute(
        "INSERT INTO merkle_nodes (session_id, level, chunk, hashes) VALUES (?, 9, 0, ?)",
        (session_id, b"x" * 32),
    )
    conn.close()
    seal = repository.get_session(fresh_db, session_id).seal  # type: ignore[union-attr]
    assert seal is not None and not check_seal(fresh_db, session_id, seal).valid


@pytest.mark.sqlite_only  # colibri verify --db reads the SQLite file
def test_colibri_verify_reports_a_damaged_tree(
    fresh_db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id, _ = _sealed_with_proofs(fresh_db)
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE merkle_leaves SET first_seq = first_seq + 1")
    conn.close()
    assert run_verify(str(fresh_db.path), None) == 1
    out = capsys.readouterr().out
    assert "first break:      none" in out and "1 mismatch(es)" in out
    assert f"tree damaged:     session {session_id}: " in out


def test_a_proof_for_a_record_altered_after_sealing_is_refused(fresh_db: Database) -> None:
    session_id, record_ids = _sealed_with_proofs(fresh_db)
    forged = "0" * 64
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET hash = ? WHERE record_id = ?", (forged, record_ids[3]))
    conn.close()
    altered = fresh_db.execute("SELECT record_id FROM thought_records WHERE hash = ?", (forged,)).fetchone()[
        0
    ]
    with _refused("ERR_PROOF_STORE_DAMAGED"):
        sessions.root(fresh_db, session_id, altered)  # its record_id follows its hash
