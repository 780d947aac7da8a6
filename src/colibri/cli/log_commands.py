"""`colibri checkpoint`, `log entries`, `log find`, `prove inclusion` and `prove consistency`.

Exit codes as for every command (cli/log_store.py). `key ...` is in key_commands.py, `verify
--checkpoint` in verify_checkpoint.py.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from colibri.cli.log_store import Unusable, log_store, usage
from colibri.core.reasons import LONGEST_MESSAGE
from colibri.core.shown import shown
from colibri.domains.log import tree
from colibri.serving.exits import EXIT_FAILED, EXIT_OK
from colibri.storage.audit_read import ActionSummary, action_summaries


def log_entries(db_path: Path | str, first: int | None, last: int | None, rows: bool = False) -> int:
    """Print entry hashes first..last (inclusive), one lowercase hex hash a line; with `rows`, each
    followed by what it logs (`entry_line`)."""
    try:
        with log_store(db_path) as db, db.snapshot() as conn:
            size = tree.size(conn)
            lo, hi = 0 if first is None else first, size - 1 if last is None else last
            if lo < 0 or hi >= size or (lo > hi and size):
                raise Unusable(f"the log has entries 0..{size - 1}; --from {lo} --to {hi} is outside it")
            entries = tree.entries(conn, lo, hi)
            if not rows:
                for entry in entries:
                    sys.stdout.write(entry.entry_hash.hex() + "\n")
                return EXIT_OK
            numbers = [entry.ref for entry in entries if entry.kind == "action"]
            calls = action_summaries(conn, min(numbers), max(numbers)) if numbers else {}
            for entry in entries:
                sys.stdout.write(entry_line(entry, calls.get(entry.ref) if entry.kind == "action" else None))
    except Unusable as exc:
        return usage("log entries", str(exc))
    return EXIT_OK


def entry_line(entry: tree.Entry, call: ActionSummary | None) -> str:
    """One line of `log entries --rows`, tab-separated, the hash first (so `cut -f1` gives the plain
    list): index, what it logs (`action #12`, `record #3`) and, for a call, its principal, tool and
    outcome, and a refusal's reason and message, then what proved the caller (SPEC §20) as
    `token_id=...`, `issuer=...` and `via=...` (the gateway that vouched for it) where the row has
    them. Names are escaped (core/shown.py): a name's CR/LF or bidi characters never forge a line or
    reorder one."""
    fields = [entry.entry_hash.hex(), str(entry.index), f"{entry.kind} #{entry.ref}"]
    if call is not None:
        fields += [shown(call.principal), shown(call.tool), call.outcome]
        if call.reason is not None:
            fields.append(shown(f"{call.reason}: {call.reason_message or ''}", longest=2 * LONGEST_MESSAGE))
        fields += [
            shown(f"{key}={value}")
            for key, value in (("token_id", call.token_id), ("issuer", call.issuer), ("via", call.via))
            if value
        ]
    return "\t".join(fields) + "\n"


def prove_inclusion(
    db_path: Path | str, indexes: list[int], size: int | None, *, timings: bool = False
) -> int:
    """One inclusion proof per index, a JSON line each, all in one snapshot; with `timings`, each
    proof's own time (its reads and hashing, not the process start), wall and CPU, follows on stderr."""
    answers: list[dict[str, object]] = []
    took: list[tuple[float, float]] = []
    try:
        with log_store(db_path) as db, db.snapshot() as conn:
            current = tree.size(conn)
            tree_size = current if size is None else size
            for index in indexes:
                if not 0 < tree_size <= current or not 0 <= index < tree_size:
                    raise Unusable(
                        f"entry {index} in a tree of {tree_size} entries cannot be proven: the log has"
                        f" {current}; use 0 <= INDEX < N <= the log's size"
                    )
            for index in indexes:
                started, cpu = time.perf_counter(), time.thread_time()
                path = tree.inclusion_path(conn, index, tree_size)
                entry = tree.entry_hash(conn, index)
                # The CPU time too: on a loaded machine the wall time also counts the waits for a core.
                took.append((time.perf_counter() - started, time.thread_time() - cpu))
                answers.append(
                    {
                        "index": index,
                        "size": tree_size,
                        "entry_hash": entry.hex(),
                        "audit_path": [node.hex() for node in path],
                    }
                )
    except (Unusable, LookupError) as exc:
        return usage("prove inclusion", str(exc))
    sys.stdout.write("".join(json.dumps(answer) + "\n" for answer in answers))
    if timings:
        lines = (
            f"inclusion {a['index']}: {wall * 1000:.3f} ms ({cpu * 1000:.3f} ms CPU)\n"
            for a, (wall, cpu) in zip(answers, took, strict=True)
        )
        sys.stderr.write("".join(lines))
    return EXIT_OK


def prove_consistency(db_path: Path | str, old: int, new: int) -> int:
    try:
        with log_store(db_path) as db, db.snapshot() as conn:
            current = tree.size(conn)
            if not 0 < old <= new <= current:
                raise Unusable(f"use 0 < OLD <= NEW <= {current} (the log's size); got {old} and {new}")
            proof = tree.consistency_proof(conn, old, new)
    except (Unusable, LookupError) as exc:
        return usage("prove consistency", str(exc))
    print(json.dumps({"old_size": old, "new_size": new, "proof": [node.hex() for node in proof]}))
    return EXIT_OK


def log_find(db_path: Path | str, record: int | None, action: str | None) -> int:
    """Print the log index of thought record `record` or of the call `action` (a correlation id).

    Exit 2 when there is no such record or call; 1 when it exists but no entry logs it (the
    log was altered, or the call has not finished yet).
    """
    try:
        with log_store(db_path) as db, db.snapshot() as conn:
            if record is not None:
                what = f"thought record seq {record}"
                row = conn.execute("SELECT seq FROM thought_records WHERE seq = ?", (record,)).fetchone()
                kind, ref = tree.RECORD, None if row is None else int(row[0])
            else:
                what = f"call {action}"
                row = conn.execute(
                    "SELECT sequence_no, outcome FROM actions WHERE correlation_id = ?", (action,)
                ).fetchone()
                if row is not None and row[1] == "running":
                    print(
                        f"colibri log find: {what} has not finished; it is logged when it does",
                        file=sys.stderr,
                    )
                    return EXIT_FAILED
                kind, ref = tree.ACTION, None if row is None else int(row[0])
            if ref is None:
                raise Unusable(f"there is no {what} in {db_path}")
            found = conn.execute(
                "SELECT idx FROM log_entries WHERE kind = ? AND ref = ?", (kind, ref)
            ).fetchone()
    except Unusable as exc:
        return usage("log find", str(exc))
    if found is None:
        print(
            f"colibri log find: {what} is in no log entry: the log was altered; check it with "
            "`colibri verify --checkpoint`",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(int(found[0]))
    return EXIT_OK
