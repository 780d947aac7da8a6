"""The verifiable log kept while a program runs (SPEC §11, §14, §16): what `colibri serve` and the
switchboard's audit store both do with the store they write, below both of them.

    signer.py        the checkpoint signer at start: the key, key continuity, the witness policy
    duty.py          checkpoints on an interval while the log grows and at shutdown, beside the
                     witness duty; the store's work goes through each program's `Runner`
    witness_duty.py  one submitter per witness, woken by each checkpoint, with backoff
    witnessing.py    submitting a checkpoint to a witness (C2SP tlog-witness), storing its cosignature
    witness_http.py  the one edge to the HTTP client for witnesses
"""

from colibri.checkpointing.duty import checkpoint_at_shutdown, checkpoint_now, keep_log
from colibri.checkpointing.signer import LogSettings, adopt, open_notary, signer_of
from colibri.checkpointing.witnessing import Runner, StoreClosed, Submitter, WitnessedNotary

__all__ = [
    "LogSettings",
    "Runner",
    "StoreClosed",
    "Submitter",
    "WitnessedNotary",
    "adopt",
    "checkpoint_at_shutdown",
    "checkpoint_now",
    "keep_log",
    "open_notary",
    "signer_of",
]
