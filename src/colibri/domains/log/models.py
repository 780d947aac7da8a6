"""The log's part of audit_verify_chain's answer (no imports beyond pydantic: the trail's models
load it while the log itself may still be loading)."""

from __future__ import annotations

from pydantic import Field

from colibri.core.spec import Model


class LogDifference(Model):
    """The first log entry that no longer matches the row it logs."""

    index: int = Field(ge=0, description="0-based index of the entry in the verifiable log.")
    reason: str


class LogStatus(Model):
    """The verifiable log rechecked: the stored tree against the entries, the entries against the rows."""

    size: int = Field(ge=0, description="Entries in the log (thought records and finished calls).")
    root: str = Field(description="RFC 9162 root over every entry, recomputed now (lowercase hex).")
    tree_matches_entries: bool = Field(
        description="Whether every stored tree node (what checkpoints and proofs are built from) is the one "
        "the entries make."
    )
    entries_match_rows: bool = Field(
        description="Whether every entry still matches its thought record or audit row, and every record and "
        "finished call is logged."
    )
    first_difference: LogDifference | None = Field(
        description="The first entry that differs from its row; null when none does."
    )

    @property
    def valid(self) -> bool:
        return self.tree_matches_entries and self.entries_match_rows
