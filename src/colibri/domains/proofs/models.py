"""Input and output models of the η proof store tools (SPEC §5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr

from colibri.core.spec import Arguments, Model
from colibri.domains.proofs.merkle import ALGORITHM
from colibri.domains.trail.api import RECORD_ID_PATTERN, Text

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$"

SessionIdIn = Annotated[
    Text,
    Field(
        min_length=1,
        max_length=128,
        description="An audit session id, as audit_session_start returned it.",
    ),
]
Hash = Annotated[str, Field(description="A SHA-256 hash, 64 lowercase hex digits.")]
CHECKPOINT_DESCRIPTION = (
    "The verifiable log's state signed at the seal: a C2SP tlog-checkpoint (origin, size, base64 root) "
    "as an Ed25519 signed note. Keep it anywhere outside the database; `colibri verify --checkpoint FILE "
    "--key VERIFIER_KEY` then proves nothing before it was changed. Null only without a signing key."
)


class SessionStartArgs(Arguments):
    """Arguments of audit_session_start."""

    session_id: Annotated[
        StrictStr | None,
        Field(
            min_length=1,
            max_length=128,
            pattern=SESSION_ID_PATTERN,
            description="Id for the new session: letters, digits and . _ : @ - (starting with a letter "
            "or digit), at most 128 characters. Omit it to get a generated one.",
        ),
    ] = None
    agent_id: Annotated[
        Text | None,
        Field(min_length=1, max_length=128, description="Who works in this session (free text)."),
    ] = None
    purpose: Annotated[
        Text | None,
        Field(min_length=1, max_length=2000, description="What the session is for, in a sentence or two."),
    ] = None


class SessionStarted(Model):
    """A new, open audit session."""

    session_id: str = Field(description="Pass this to thought_record, merkle_finalize and merkle_root.")
    started_at: str


class FinalizeArgs(Arguments):
    """Arguments of merkle_finalize."""

    session_id: SessionIdIn


class Finalized(Model):
    """A sealed session and its Merkle root."""

    session_id: str
    root: Hash
    leaf_count: int = Field(ge=1, description="How many records the sealed tree holds, in seq order.")
    finalized_at: str
    checkpoint: str | None = Field(default=None, description=CHECKPOINT_DESCRIPTION)


class RootArgs(Arguments):
    """Arguments of merkle_root."""

    session_id: SessionIdIn
    record_id: Annotated[
        StrictStr | None,
        Field(
            pattern=RECORD_ID_PATTERN,
            description="A record of this session (rec_ + 24 hex digits, as thought_record returned it); "
            "adds an inclusion proof for it.",
        ),
    ] = None


class InclusionProof(Model):
    """An RFC 9162 §2.1.3 inclusion proof of one record in its session's sealed tree."""

    leaf_index: int = Field(ge=0, description="0-based position of the record among the session's leaves.")
    tree_size: int = Field(ge=1, description="Leaves in the sealed tree (its leaf_count).")
    record_hash: Hash = Field(description="The record's hash; its 32 raw bytes are the leaf data.")
    audit_path: list[Hash] = Field(
        description="RFC 9162 §2.1.3 inclusion path: sibling hashes from the leaf up to the root."
    )


class RootAnswer(Model):
    """A sealed root, with a proof when a record was named."""

    root: Hash
    leaf_count: int = Field(ge=1)
    finalized_at: str
    algorithm: Literal["rfc9162-sha256"] = ALGORITHM
    proof: InclusionProof | None = Field(default=None, description="Present when record_id was given.")
    checkpoint: str | None = Field(
        default=None,
        description="The log checkpoint signed when the session was sealed (null for seals made before "
        "the verifiable log existed).",
    )
