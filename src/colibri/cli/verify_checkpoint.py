"""`colibri verify --checkpoint FILE --key VERIFIER_KEY`: the log against a checkpoint kept elsewhere.

The log alone (SPEC §25): the signature, the root of the entries at the checkpoint's size,
consistency since, the stored tree against the entries; re-deriving entries from their rows is
`verify --db` (offline.py), run after this when the store is named with --db or --db-url.

The file is read only up to MAX_CHECKPOINT_BYTES (a checkpoint is a few hundred bytes; a file
over 1 MiB is refused unread beyond that), and no message echoes more than 200 characters of a
bad line (note.shown), so `--checkpoint /dev/zero` ends at once with a short message.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from colibri.cli.log_store import Unusable, log_store, shown_store, usage
from colibri.domains.log.fastcheck import worker_pool
from colibri.domains.log.note import NoteError, Verifier
from colibri.domains.log.policy import PolicyError, WitnessPolicy, read_policy
from colibri.domains.log.verify import CheckpointReport, verify_against
from colibri.serving.exits import EXIT_FAILED, EXIT_OK
from colibri.verifier.rate import rate

MAX_CHECKPOINT_BYTES = 1 << 20


def verify_checkpoint(
    db_path: Path | str, checkpoint_file: str, key: str, origin: str | None, policy_file: str | None = None
) -> int:
    """Exit 0 when the log holds the checkpoint's entries unchanged (and, with a witness policy, its
    quorum cosigned it), 1 when not, 2 on unusable input."""
    started = time.perf_counter()
    try:
        verifier = read_verifier(key)
        policy = None if policy_file is None else read_policy(Path(policy_file), urls_required=False)
        note = read_checkpoint(checkpoint_file)
        with worker_pool() as pool, log_store(db_path) as db:
            report = verify_against(db, note, verifier, origin, pool)
    except (Unusable, PolicyError) as exc:
        return usage("verify", str(exc))
    except NoteError as exc:
        # The verdict line alone: stdout carries every verdict, and a second copy on stderr said
        # the same thing twice.
        print(f"result:           REJECTED — the checkpoint {checkpoint_file}: {exc}")
        return EXIT_FAILED
    quorum = None if policy is None else _quorum(note, policy)
    print_report(db_path, checkpoint_file, report, time.perf_counter() - started, quorum)
    return EXIT_OK if report.valid and (quorum is None or quorum.met) else EXIT_FAILED


@dataclass(frozen=True, slots=True)
class Quorum:
    """The policy's witnesses that validly cosigned the checkpoint, against the quorum it requires."""

    cosigned: list[str]
    witnesses: int
    required: int
    problems: list[str]

    @property
    def met(self) -> bool:
        return len(self.cosigned) >= self.required


def _quorum(note: str, policy: WitnessPolicy) -> Quorum:
    good, problems = policy.cosigned_by(note)
    return Quorum([w.name for w in good], len(policy.witnesses), policy.quorum, problems)


def read_checkpoint(path: str) -> str:
    """The checkpoint file's text; Unusable when it cannot be read, is over 1 MiB or is not UTF-8."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CHECKPOINT_BYTES + 1)
    except OSError as exc:
        raise Unusable(f"cannot read checkpoint file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CHECKPOINT_BYTES:
        raise Unusable(
            f"checkpoint file {path} is over 1 MiB; a checkpoint is a few hundred bytes (origin, size, root "
            "and signature lines): pass the <size>.checkpoint file the server exported"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unusable(
            f"checkpoint file {path} is not UTF-8 text (byte {exc.start}); a checkpoint is text"
        ) from None


def read_verifier(key: str) -> Verifier:
    """The verifier key itself, or a file holding it; Unusable otherwise."""
    try:
        return Verifier.parse(key)
    except NoteError as exc:
        path = Path(key)
        if not path.is_file():
            raise Unusable(
                f"{exc}; pass --key NAME+HASH+KEY as `colibri key show` prints it, or a file"
            ) from None
    try:
        with open(path, "rb") as handle:
            return Verifier.parse(handle.read(4096).decode("utf-8"))
    except (OSError, UnicodeDecodeError, NoteError) as exc:
        raise Unusable(f"cannot read a verifier key from file {path}: {exc}") from exc


def print_report(
    db_path: Path | str, checkpoint_file: str, report: CheckpointReport, seconds: float, quorum: Quorum | None
) -> None:
    cp = report.checkpoint
    per_second = rate(report.log_size, seconds, "entries")
    signed = "signature valid"
    if report.handovers:
        sizes = ", ".join(str(handover.checkpoint.size) for handover in report.handovers)
        signed = f"signed by {report.signed_by.key()}, handed over from the given key at size {sizes}"
    lines = [
        f"database:         {shown_store(db_path)} (opened read-only)",
        f"checkpoint:       {checkpoint_file}: {cp.origin}, size {cp.size}, root {cp.root.hex()} ({signed})",
        f"log entries:      {report.log_size:,} checked in {seconds:.2f} s{per_second} (their hashes and"
        " tree; no row is read: --db re-derives them)",
    ]
    if quorum is not None:
        names = ", ".join(quorum.cosigned) or "none"
        count = f"{len(quorum.cosigned)} of the policy's {quorum.witnesses}"
        lines.append(f"witnesses:        {count} cosigned it (quorum {quorum.required}): {names}")
    first = report.first_difference
    if first is not None:
        lo, hi = first
        where = f"entry index {lo}" if lo == hi else f"an entry index from {lo} to {hi}"
        lines.append(f"first difference: {where}")
    lines += [f"problem:          {problem}" for problem in report.problems]
    if quorum is not None and not quorum.met:
        lines += [f"witness problem:  {problem}" for problem in quorum.problems]
    matched = f"the log holds the checkpoint's {cp.size} entries unchanged and only appended after them"
    if not report.valid:
        verdict = "BROKEN — the log no longer matches the checkpoint"
    elif quorum is not None and not quorum.met:
        verdict = (
            f"QUORUM NOT MET — {matched}, but the checkpoint carries {len(quorum.cosigned)} valid witness "
            f"cosignature(s) of the {quorum.required} the policy requires"
        )
    else:
        verdict = f"VALID — {matched}"
    lines.append(f"result:           {verdict}")
    print("\n".join(lines))
