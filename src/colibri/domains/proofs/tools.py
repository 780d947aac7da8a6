from __future__ import annotations

from colibri.core.modes import ToolClass
from colibri.core.spec import ErrorPattern, Tool

TOOLS: list[Tool] = [
    Tool(
        name="audit_session_start",
        title="Start an audit session",
        description=(
            "Start an audit session: a fresh log that groups the thoughts recorded during one piece of "
            "work (an agent's run); every thought_record needs an open session. Optional session_id "
            "(generated when omitted), agent_id and purpose. Returns "
            "{session_id, started_at}. Domain errors come back as data.ok=false: ERR_SESSION_EXISTS "
            "when the id is taken."
        ),
        input_model="colibri.domains.proofs.models:SessionStartArgs",
        output_model="colibri.domains.proofs.models:SessionStarted",
        handler="colibri.domains.proofs.handlers:session_start",
        tool_class=ToolClass.WRITE,
        quick=True,
        pattern=ErrorPattern.B,
    ),
    Tool(
        name="merkle_finalize",
        title="Seal a session",
        description=(
            "Seal (close for good) a finished session so nothing more can be added: builds the RFC 9162 "
            "Merkle tree over its record hashes in seq order and stores the root. Returns {session_id, root, "
            "leaf_count, finalized_at}. Domain errors (data.ok=false): ERR_SESSION_NOT_FOUND, "
            "ERR_ALREADY_FINALIZED, ERR_NO_RECORDS (record at least one thought first)."
        ),
        input_model="colibri.domains.proofs.models:FinalizeArgs",
        output_model="colibri.domains.proofs.models:Finalized",
        handler="colibri.domains.proofs.handlers:finalize",
        tool_class=ToolClass.WRITE,
        pattern=ErrorPattern.B,
        # Adds a seal and nothing else; a second call is refused and changes nothing.
        idempotent=True,
    ),
    Tool(
        name="merkle_root",
        title="Get a session's Merkle root and proofs",
        description=(
            "Proof of what a sealed session holds: its Merkle root {root, leaf_count, finalized_at, "
            "algorithm: rfc9162-sha256}; with record_id also proof {leaf_index, tree_size, record_hash, "
            "audit_path}, an RFC 9162 §2.1.3 inclusion proof anyone can check offline (leaf data = "
            "the 32 bytes of record_hash; audit_path from the leaf upward). Domain errors "
            "(data.ok=false): ERR_SESSION_NOT_FOUND, ERR_NOT_FINALIZED (call merkle_finalize first), "
            "ERR_NOT_FOUND (record not in this session), ERR_PROOF_STORE_DAMAGED (the stored tree or "
            "records changed after sealing, so no valid proof can be given; run audit_verify_chain)."
        ),
        input_model="colibri.domains.proofs.models:RootArgs",
        output_model="colibri.domains.proofs.models:RootAnswer",
        handler="colibri.domains.proofs.handlers:root",
        tool_class=ToolClass.READ,
        pattern=ErrorPattern.B,
    ),
]
