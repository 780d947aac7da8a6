"""Input and output models of the ζ decision trail tools (SPEC §5)."""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, StrictInt, StrictStr, model_validator

from colibri.core.cursor import MAX_SEQ, decode_cursor
from colibri.core.spec import Arguments, Model
from colibri.domains.log.api import LogStatus
from colibri.domains.trail.text import Text

Kind = Literal["plan", "analysis", "decision", "observation", "reflection", "writeback"]
BreakReason = Literal["hash_mismatch", "prev_link_mismatch", "seq_gap"]
MAX_CONTENT = 65_536
FIRST_PAGE = "the oldest record"  # what a list without a cursor starts from


SessionIdIn = Annotated[
    Text,
    Field(min_length=1, max_length=128, description="An open audit session id, from audit_session_start."),
]
TaskIdIn = Annotated[
    Text,
    Field(min_length=1, max_length=128, description="An existing task id, e.g. T-1 (see task_list)."),
]
Hash = Annotated[str, Field(description="A SHA-256 hash, 64 lowercase hex digits.")]


def _check_cursor(cursor: str | None) -> str | None:
    if cursor is not None:
        decode_cursor(cursor, first_page=FIRST_PAGE)
    return cursor


class ThoughtRecordArgs(Arguments):
    """Arguments of thought_record."""

    session_id: SessionIdIn
    kind: Kind = Field(
        description="What sort of thought: plan, analysis, decision, observation, "
        "reflection, or writeback (a result written back to a task)."
    )
    content: Text = Field(
        min_length=1, max_length=MAX_CONTENT, description="The thought itself, 1 to 65,536 characters."
    )
    task_id: TaskIdIn | None = Field(
        default=None,
        description="The task this thought is about, if any; it must exist. A record citing a task "
        "is its writeback, which the task needs before it can move to done.",
    )
    agent_id: Annotated[Text, Field(min_length=1, max_length=128)] | None = Field(
        default=None, description="Who is thinking (free text)."
    )


class ThoughtRecorded(Model):
    """Where the new record sits in the hash chain."""

    record_id: str = Field(description="rec_ + the first 24 hex digits of hash; use it with merkle_root.")
    seq: int = Field(ge=1, description="Position in the global hash chain.")
    session_id: str
    hash: Hash
    prev_hash: Hash
    created_at: str


class ListArgs(Arguments):
    """Arguments of thought_record_list: filters (all optional, combined with AND) and paging."""

    session_id: SessionIdIn | None = None
    task_id: TaskIdIn | None = None
    kind: Kind | None = Field(default=None, description="Only records of this kind.")
    limit: StrictInt = Field(default=50, ge=1, le=200, description="Records per page, 1 to 200.")
    cursor: Annotated[StrictStr | None, AfterValidator(_check_cursor)] = Field(
        default=None, description="next_cursor from the previous page; omit for the oldest records."
    )


class Record(Model):
    """A stored record with every field (as stored: a tampered row is shown as it is)."""

    record_id: str
    seq: int
    session_id: str
    kind: str
    content: str
    task_id: str | None
    agent_id: str | None
    created_at: str
    prev_hash: str
    hash: str
    principal: str = Field(
        description="Who wrote it, as the server proved it: the token's name over HTTP, 'local' on "
        "stdio; agent_id is the agent's own label. Not part of hash (SPEC §5)."
    )


class RecordPage(Model):
    """One page of records."""

    records: list[Record] = Field(description="Oldest first (ascending seq).")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page.")


class VerifyArgs(Arguments):
    """Arguments of audit_verify_chain: the scope to check (default: the whole chain)."""

    session_id: SessionIdIn | None = Field(
        default=None,
        description="Check the chain this session's records are linked into, and its seal (root and "
        "stored tree) when it is sealed and no seq range is given.",
    )
    from_seq: StrictInt | None = Field(
        default=None, ge=1, le=MAX_SEQ, description="First seq to check (default 1)."
    )
    to_seq: StrictInt | None = Field(
        default=None, ge=1, le=MAX_SEQ, description="Last seq to check (default: the end)."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.from_seq is not None and self.to_seq is not None and self.from_seq > self.to_seq:
            raise ValueError(f"from_seq ({self.from_seq}) must not be greater than to_seq ({self.to_seq})")
        return self


class ChainBreak(Model):
    """The first place where the stored chain stops matching its hashes."""

    seq: int = Field(description="Where the chain breaks.")
    reason: BreakReason = Field(
        description="seq_gap: a record is missing; hash_mismatch: a record's stored fields or hash were "
        "altered; prev_link_mismatch: the record does not link to the stored record before it."
    )
    expected: str | int | None = Field(description="What the chain requires at this point.")
    found: str | int | None = Field(description="What is stored (null: nothing).")


class SealStatus(Model):
    """A sealed session's stored root beside the root recomputed now."""

    session_id: str
    sealed_root: Hash
    computed_root: Hash = Field(description="Merkle root over the session's stored record hashes now.")
    sealed_leaf_count: int
    computed_leaf_count: int
    stored_tree_intact: bool = Field(
        description="Whether the stored Merkle tree that merkle_root builds proofs from (every node and "
        "leaf seq) is still the tree rebuilt from the session's records; false means proofs may not verify."
    )
    valid: bool = Field(description="Roots, leaf counts and the stored tree all match.")


class Verification(Model):
    """The outcome of audit_verify_chain."""

    valid: bool = Field(
        description="True when no break was found, the seal (if checked) matches, and so does the log "
        "(if checked)."
    )
    checked: int = Field(
        ge=0,
        description="Records of the global chain checked (within from_seq..to_seq when given). With a "
        "session_id this still counts every record in that range, whichever session it belongs to: a "
        "session's records are linked into the one chain through the others, so all of them are checked.",
    )
    head_hash: Hash | None = Field(
        description="Stored hash of the last record checked (with session_id: of that session's last "
        "record in the range); null if none."
    )
    first_break: ChainBreak | None
    seal: SealStatus | None = Field(
        description="With a session_id of a sealed session (and no seq range): its stored root beside "
        "the root recomputed from its records; null otherwise."
    )
    log: LogStatus | None = Field(
        default=None,
        description="Without from_seq/to_seq: the verifiable log rechecked (stored tree against entries, "
        "entries against records and audit rows); null when a seq range was given.",
    )
