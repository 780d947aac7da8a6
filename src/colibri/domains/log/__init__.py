"""The verifiable log (SPEC §11): every thought record and finished call as an entry of one
append-only RFC 9162 tree, whose state is signed in C2SP checkpoints by a key that does not
live in the database.

    appends.py     log_record / log_action: what the trail and the audit writer call
    receipts.py    ActionLog: log_action returning the entry's receipt, which answers carry (SPEC §22)
    entries.py     entry hashes (a record's hash; the JCS hash of a finished action)
    tree.py        the stored tree: O(log n) appends, roots and proofs
    rfc9162.py     roots and proofs from complete subtrees; consistency verification
    note.py        C2SP signed notes and note keys (Ed25519)
    checkpoint.py  C2SP tlog-checkpoint bodies
    notary.py      making, storing and exporting checkpoints
    keys.py        signer key files
    continuity.py  one signing key per log until a recorded handover (SPEC §14)
    cosignature.py C2SP cosignature/v1: witnesses' timestamped Ed25519 cosignatures (SPEC §16)
    policy.py      the witness policy file: witnesses and the quorum
    cosigned.py    cosignatures stored with checkpoints; each witness's last submission
    store.py       the database id and stored checkpoints
    scan.py        the exact pass: entries, rows and stored tree, naming the first difference
    fastcheck.py   the fast, parallel pass over aligned ranges (nodecheck.py: its tree part;
                   leaves.py: the entries alone, read in bulk, for the log-only check)
    verify.py      verifying a database's log alone against a checkpoint kept elsewhere
    models.py      the log's part of audit_verify_chain's answer
    status.py      rechecking the log for audit_verify_chain
    api.py         what the trail, the proof store and the audit writer (through the chain) call

The `colibri key/checkpoint/log/prove/verify --checkpoint` commands are in cli/ (log.py parses).
"""

from colibri.domains.log.schema import MIGRATIONS, POSTGRES_MIGRATIONS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS"]
