"""η proof store rules: start a session, seal it with a Merkle root, answer roots and proofs.

Refusals are `DomainError`s with the `ERR_*` codes of SPEC §5; the tools carry them as
Pattern B envelopes.
"""

from __future__ import annotations

import hashlib

from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.errors import DomainError
from colibri.domains.proofs import repository, tree_store
from colibri.domains.proofs.merkle import HASH_SIZE, build_levels, verify_inclusion
from colibri.domains.proofs.models import Finalized, InclusionProof, RootAnswer, SessionStarted
from colibri.domains.proofs.repository import Seal, Session
from colibri.domains.trail import api as trail
from colibri.storage import Connection, Database


def start(
    db: Database, session_id: str | None, agent_id: str | None = None, purpose: str | None = None
) -> SessionStarted:
    """Open a new session, with the caller's id or a generated one."""
    started_at = utc_now()
    with db.atomic() as conn:
        if session_id is None:
            session_id = _insert_generated(conn, agent_id, purpose, started_at)
        elif not repository.insert_session(conn, session_id, agent_id, purpose, started_at):
            existing = repository.get_session(conn, session_id)
            since = f" (started {existing.started_at})" if existing else ""
            raise DomainError(
                "ERR_SESSION_EXISTS",
                f"session {session_id!r} already exists{since}; choose another session_id, "
                "or omit it to get a generated one",
                session_id=session_id,
            )
    return SessionStarted(session_id=session_id, started_at=started_at)


def finalize(db: Database, session_id: str) -> Finalized:
    """Seal the session: Merkle tree over its record hashes in seq order, root stored."""
    with db.atomic() as conn:
        session = _require(conn, session_id)
        if session.seal is not None:
            raise DomainError(
                "ERR_ALREADY_FINALIZED",
                f"session {session_id!r} was already sealed at {session.seal.finalized_at} with root "
                f"{session.seal.root}; read it with merkle_root, or start a new session for new records",
                session_id=session_id,
                root=session.seal.root,
            )
        records = trail.record_hashes(conn, session_id)
        if not records:
            raise DomainError(
                "ERR_NO_RECORDS",
                f"session {session_id!r} has no records, and an empty session cannot be sealed; "
                "add at least one with thought_record first",
                session_id=session_id,
            )
        levels = build_levels(_leaf_hashes(session_id, records))
        seal = Seal(root=levels[-1][0].hex(), leaf_count=len(records), finalized_at=utc_now())
        repository.insert_seal(conn, session_id, seal)
        tree_store.save_tree(conn, session_id, levels, [seq for seq, _ in records])
    return Finalized(
        session_id=session_id, root=seal.root, leaf_count=seal.leaf_count, finalized_at=seal.finalized_at
    )


def root(conn: Connection, session_id: str, record_id: str | None = None) -> RootAnswer:
    """The sealed root, and with `record_id` an inclusion proof for that record."""
    session = _require(conn, session_id)
    seal = session.seal
    if seal is None:
        count = trail.count_records(conn, session_id)
        raise DomainError(
            "ERR_NOT_FINALIZED",
            f"session {session_id!r} is still open ({count} record(s)) and has no root yet; "
            "seal it with merkle_finalize first",
            session_id=session_id,
        )
    proof = None if record_id is None else _proof(conn, session_id, seal, record_id)
    return RootAnswer(root=seal.root, leaf_count=seal.leaf_count, finalized_at=seal.finalized_at, proof=proof)


def _proof(conn: Connection, session_id: str, seal: Seal, record_id: str) -> InclusionProof:
    ref = trail.find_record(conn, record_id)
    if ref is None:
        raise DomainError(
            "ERR_NOT_FOUND",
            f"no record {record_id!r} exists; use thought_record_list with session_id={session_id!r} "
            "to see this session's record ids",
            record_id=record_id,
        )
    if ref.session_id != session_id:
        raise DomainError(
            "ERR_NOT_FOUND",
            f"record {record_id!r} belongs to session {ref.session_id!r}, not {session_id!r}; "
            f"ask merkle_root with session_id={ref.session_id!r}",
            record_id=record_id,
        )
    index = tree_store.leaf_index(conn, session_id, ref.seq)
    path: list[bytes] = []
    if index is not None:
        try:
            path = tree_store.audit_path(conn, session_id, seal.leaf_count, index)
        except LookupError:  # a stored node is missing: the empty path cannot verify, refused below
            path = []
    if index is None or not _proves(ref.hash, index, seal, path):
        # The record is in this sealed session, so a proof must exist and verify: anything
        # else means the stored tree or the records were altered after sealing.
        raise DomainError(
            "ERR_PROOF_STORE_DAMAGED",
            f"no valid proof can be given for record {record_id!r} (seq {ref.seq}) of session "
            f"{session_id!r}: its stored Merkle tree or records were altered after sealing; locate "
            f"the damage with audit_verify_chain(session_id={session_id!r}) or `colibri verify --db FILE`",
            session_id=session_id,
            record_id=record_id,
        )
    return InclusionProof(
        leaf_index=index,
        tree_size=seal.leaf_count,
        record_hash=ref.hash,
        audit_path=[node.hex() for node in path],
    )


def _proves(record_hash: str, index: int, seal: Seal, path: list[bytes]) -> bool:
    """Whether the proof about to be served verifies, as any client will check it."""
    try:
        leaf, root_bytes = bytes.fromhex(record_hash), bytes.fromhex(seal.root)
    except (TypeError, ValueError):
        return False
    return verify_inclusion(leaf, index, seal.leaf_count, path, root_bytes)


def _require(conn: Connection, session_id: str) -> Session:
    session = repository.get_session(conn, session_id)
    if session is None:
        raise DomainError(
            "ERR_SESSION_NOT_FOUND",
            f"no audit session {session_id!r}; start one with audit_session_start and use the "
            "session_id it returns",
            session_id=session_id,
        )
    return session


def _insert_generated(conn: Connection, agent_id: str | None, purpose: str | None, at: str) -> str:
    while True:  # 64 random bits: a clash is practically impossible, but never fatal
        session_id = ids.session_id()
        if repository.insert_session(conn, session_id, agent_id, purpose, at):
            return session_id


def _leaf_hashes(session_id: str, records: list[tuple[int, str]]) -> list[bytes]:
    """Leaf hashes of the stored record hashes (their 32 raw bytes are the leaf data)."""
    try:
        data = [bytes.fromhex(value) for _, value in records]
    except (TypeError, ValueError):
        data = []
    if len(data) != len(records) or any(len(item) != HASH_SIZE for item in data):
        for seq, value in records:
            _hash_bytes(session_id, seq, value)
    sha = hashlib.sha256
    return [sha(b"\x00" + item).digest() for item in data]


def _hash_bytes(session_id: str, seq: int, value: str) -> bytes:
    """One stored hash as bytes, or ERR_CHAIN_BROKEN naming the record that holds a bad one."""
    try:
        data = bytes.fromhex(value)
    except (TypeError, ValueError):
        data = b""
    if len(data) != HASH_SIZE:
        raise DomainError(
            "ERR_CHAIN_BROKEN",
            f"record seq {seq} of session {session_id!r} has a malformed stored hash, so the session "
            f"cannot be sealed; locate the damage with audit_verify_chain(session_id={session_id!r})",
            session_id=session_id,
            seq=seq,
        )
    return data
