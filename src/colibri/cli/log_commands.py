"""`colibri key generate`, `checkpoint`, `log entries`, `prove`, and `verify --checkpoint`.

Exit codes as for every command: 0 success, 1 the check failed, 2 unusable input (no such
file, a bad key, an index outside the log). Output on stdout; problems on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from colibri.core.errors import StorageError
from colibri.domains.log import notary as log_notary
from colibri.domains.log import store, tree
from colibri.domains.log.fastcheck import worker_pool
from colibri.domains.log.keys import default_key_path, read_signer, write_key_file
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import NoteError, Signer, Verifier
from colibri.domains.log.verify import CheckpointReport, verify_against
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.storage import Database, open_database


class _Unusable(Exception):
    """Input the command cannot work with; the message says what would be right."""


def key_generate(name: str, out: str) -> int:
    """Write a new signer key to `out` (mode 0600) and print its verifier key."""
    try:
        signer = Signer.generate(name)
        write_key_file(Path(out), signer)
    except NoteError as exc:
        return _usage("key generate", str(exc))
    print(signer.verifier().key())
    return EXIT_OK


def checkpoint(db_path: Path | str, signing_key: Path | None, origin: str | None, export: Path | None) -> int:
    """Print the latest checkpoint, making (and storing, exporting) one first if the log grew."""
    try:
        with _database(db_path, readonly=False) as db, db.atomic() as conn:
            latest = store.latest_checkpoint(conn)
            if latest is None or latest.size != tree.size(conn):
                key = signing_key or (default_key_path(db_path) if isinstance(db_path, Path) else None)
                if key is None:
                    raise _Unusable(
                        "the log grew and no signing key is named; set COLIBRI_SIGNING_KEY to the signer key "
                        "file the servers use"
                    )
                if not key.is_file():
                    raise _Unusable(
                        f"the log grew and no signing key was found at {key}; set COLIBRI_SIGNING_KEY to the "
                        "signer key file the server uses"
                    )
                latest = Notary(read_signer(key), origin, export).make(conn, log_notary.ON_DEMAND)
    except (_Unusable, NoteError) as exc:
        return _usage("checkpoint", str(exc))
    sys.stdout.write(latest.note)
    return EXIT_OK


def log_entries(db_path: Path | str, first: int | None, last: int | None) -> int:
    """Print entry hashes first..last (inclusive), one lowercase hex hash a line."""
    try:
        with _database(db_path) as db, db.snapshot() as conn:
            size = tree.size(conn)
            lo, hi = 0 if first is None else first, size - 1 if last is None else last
            if lo < 0 or hi >= size or (lo > hi and size):
                raise _Unusable(f"the log has entries 0..{size - 1}; --from {lo} --to {hi} is outside it")
            for entry in tree.entries(conn, lo, hi):
                sys.stdout.write(entry.entry_hash.hex() + "\n")
    except _Unusable as exc:
        return _usage("log entries", str(exc))
    return EXIT_OK


def prove_inclusion(db_path: Path | str, index: int, size: int | None) -> int:
    try:
        with _database(db_path) as db, db.snapshot() as conn:
            current = tree.size(conn)
            tree_size = current if size is None else size
            if not 0 < tree_size <= current or not 0 <= index < tree_size:
                raise _Unusable(
                    f"entry {index} in a tree of {tree_size} entries cannot be proven: the log has"
                    f" {current}; use 0 <= INDEX < N <= the log's size"
                )
            answer = {
                "index": index,
                "size": tree_size,
                "entry_hash": tree.entry_hash(conn, index).hex(),
                "audit_path": [node.hex() for node in tree.inclusion_path(conn, index, tree_size)],
            }
    except (_Unusable, LookupError) as exc:
        return _usage("prove inclusion", str(exc))
    print(json.dumps(answer))
    return EXIT_OK


def prove_consistency(db_path: Path | str, old: int, new: int) -> int:
    try:
        with _database(db_path) as db, db.snapshot() as conn:
            current = tree.size(conn)
            if not 0 < old <= new <= current:
                raise _Unusable(f"use 0 < OLD <= NEW <= {current} (the log's size); got {old} and {new}")
            proof = tree.consistency_proof(conn, old, new)
    except (_Unusable, LookupError) as exc:
        return _usage("prove consistency", str(exc))
    print(json.dumps({"old_size": old, "new_size": new, "proof": [node.hex() for node in proof]}))
    return EXIT_OK


def verify_checkpoint(db_path: Path | str, checkpoint_file: str, key: str, origin: str | None) -> int:
    """`colibri verify --checkpoint FILE --key VERIFIER_KEY`."""
    started = time.perf_counter()
    try:
        verifier = _verifier(key)
        note = Path(checkpoint_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _usage("verify", f"cannot read checkpoint file {checkpoint_file}: {exc}")
    except NoteError as exc:
        return _usage("verify", str(exc))
    try:
        with worker_pool() as pool, _database(db_path) as db:
            report = verify_against(db, note, verifier, origin, pool)
    except NoteError as exc:
        print(f"colibri verify: the checkpoint {checkpoint_file} is rejected: {exc}", file=sys.stderr)
        print(f"result:           REJECTED — {exc}")
        return EXIT_FAILED
    except _Unusable as exc:
        return _usage("verify", str(exc))
    _print_report(db_path, checkpoint_file, report, time.perf_counter() - started)
    return EXIT_OK if report.valid else EXIT_FAILED


def _print_report(
    db_path: Path | str, checkpoint_file: str, report: CheckpointReport, seconds: float
) -> None:
    cp = report.checkpoint
    rate = f", {report.log_size / seconds:,.0f} entries/s" if seconds > 0 and report.log_size else ""
    lines = [
        f"database:         {db_path if isinstance(db_path, Path) else _shown(db_path)} (opened read-only)",
        f"checkpoint:       {checkpoint_file}: {cp.origin}, size {cp.size}, root {cp.root.hex()}"
        " (signature valid)",
        f"log entries:      {report.log_size:,} checked in {seconds:.2f} s{rate}",
    ]
    if report.first_index is not None:
        lines.append(f"first difference: entry index {report.first_index}")
    lines += [f"problem:          {problem}" for problem in report.problems]
    verdict = (
        f"VALID — the log holds the checkpoint's {cp.size} entries unchanged and only appended after them"
        if report.valid
        else "BROKEN — the log no longer matches the checkpoint"
    )
    lines.append(f"result:           {verdict}")
    print("\n".join(lines))


def _verifier(key: str) -> Verifier:
    """The verifier key itself, or a file holding it."""
    try:
        return Verifier.parse(key)
    except NoteError:
        path = Path(key)
        if not path.is_file():
            raise
    try:
        return Verifier.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise NoteError(f"cannot read verifier key file {path}: {exc}") from exc


@contextmanager
def _database(target: Path | str, *, readonly: bool = True) -> Iterator[Database]:
    path = target if isinstance(target, Path) else _shown(target)
    if isinstance(target, Path) and not target.is_file():
        raise _Unusable(f"database file {path} does not exist; pass the database with --db PATH")
    try:
        db = open_database(target, readonly=readonly)
    except StorageError as exc:
        raise _Unusable(str(exc)) from exc
    try:
        if db.execute(db.dialect.table_exists, ("log_entries",)).fetchone() is None:
            raise _Unusable(
                f"{path} has no verifiable log (table log_entries); open it once with `colibri serve`"
                " in FULL mode"
            )
        yield db
    except StorageError as exc:
        raise _Unusable(f"cannot read {path}: {exc}") from exc
    finally:
        db.close()


def _shown(url: str) -> str:
    """A PostgreSQL URL without its password (the driver is loaded only when a URL is used)."""
    from colibri.storage.postgres.database import redact

    return redact(url)


def _usage(command: str, message: str) -> int:
    print(f"colibri {command}: {message}", file=sys.stderr)
    return EXIT_USAGE
