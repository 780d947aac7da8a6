"""`colibri db copy SRC DST`: a whole store between backends, every id, seq, hash and seal kept.

The copy reads the source in one snapshot and writes the destination in one transaction (all
or nothing), then proves it: every table's rows are digested on both sides in key order and
must match, and the copy's chain and seals are verified from scratch.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass

from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.storage import open_database
from colibri.storage.migrations import migrate, require_current
from colibri.tools.catalog import migrations_for
from colibri.verifier.online import verify_store

# Every table of a store, parents before children, with the key that orders its rows.
TABLES: tuple[tuple[str, str], ...] = (
    ("audit_sessions", "session_id"),
    ("tasks", "number"),
    ("task_dependencies", "task_id, depends_on"),
    ("task_history", "id"),
    ("thought_records", "seq"),
    ("trail_head", "id"),
    ("session_seals", "session_id"),
    ("merkle_nodes", "session_id, level, chunk"),
    ("merkle_leaves", "session_id, chunk"),
    ("actions", "sequence_no"),
    ("access_tokens", "name"),
    ("log_meta", "id"),
    ("log_entries", "idx"),
    ("log_nodes", "id"),
    ("log_checkpoints", "id"),
    ("log_cosignatures", "checkpoint_id, witness_key"),
    ("log_witnesses", "witness_key"),
    ("tool_pins", "tool"),
    ("pin_definitions", "tool, sha256"),
    ("approvals", "id"),
)
# Serial keys whose counter must continue after the copied rows (PostgreSQL sequences).
COUNTERS = (
    ("tasks", "number"),
    ("task_history", "id"),
    ("actions", "sequence_no"),
    ("log_checkpoints", "id"),
)
GENERATED = {"thought_records": {"record_id"}}  # derived by the database; never written
BATCH = 1000


class CopyError(Exception):
    """The copy cannot be made or does not match its source."""


@dataclass(frozen=True, slots=True)
class CopyResult:
    rows: dict[str, int]
    records: int
    sealed: int
    head_hash: str | None


def copy_store(source: str, destination: str) -> CopyResult:
    src = open_database(source, readonly=True)
    try:
        require_current(src, migrations_for(src.dialect.name))
        dst = open_database(destination)
        try:
            migrate(dst, migrations_for(dst.dialect.name))
            _require_empty(dst, destination)
            rows = _copy(src, dst)
            _compare(src, dst)
            report = verify_store(dst)
        finally:
            dst.close()
    finally:
        src.close()
    if not report.valid:
        raise CopyError(f"the copy in {destination} does not verify: first break {report.first_break}")
    return CopyResult(rows, report.checked, len(report.seals), report.head_hash)


def _require_empty(dst: Database, destination: str) -> None:
    for table, _ in TABLES:
        if table in ("trail_head", "log_meta"):
            continue  # the migrations write their one row
        if dst.execute(f"SELECT 1 FROM {quoted(table)} LIMIT 1").fetchone() is not None:
            raise CopyError(f"{destination} already holds data (table {table}); copy into an empty store")


def _copy(src: Database, dst: Database) -> dict[str, int]:
    counts: dict[str, int] = {}
    with src.snapshot() as reader, dst.atomic() as writer:
        writer.execute("DELETE FROM trail_head")
        writer.execute("DELETE FROM log_meta")  # the copy keeps the source's database id
        for table, key in TABLES:
            counts[table] = _copy_table(reader, writer, table, key)
        for table, key in COUNTERS:
            sql = writer.dialect.continue_counter(table, key)
            if sql is not None:
                writer.execute(sql)
    return counts


def _copy_table(reader: Connection, writer: Connection, table: str, key: str) -> int:
    columns = _known_columns(writer, table)
    listed = ", ".join(quoted(name) for name in columns)
    cursor = reader.tuples(f"SELECT {listed} FROM {quoted(table)} ORDER BY {key}")
    insert = f"INSERT INTO {quoted(table)} ({listed}) VALUES ({', '.join('?' for _ in columns)})"
    count = 0
    while batch := cursor.fetchmany(BATCH):
        writer.executemany(insert, batch)
        count += len(batch)
    return count


def _known_columns(db: Connection, table: str) -> list[str]:
    """The columns Colibri's own migrations gave `table` (read from the migrated destination), less
    the generated ones. A source may hold more (a column someone added by hand); they are not
    copied, and no name read from the source ever reaches the SQL."""
    names = [row[0] for row in db.execute(db.dialect.table_columns, (table,))]
    return [name for name in names if name not in GENERATED.get(table, set())]


def quoted(identifier: str) -> str:
    """`identifier` as a quoted SQL identifier (the same on SQLite and PostgreSQL)."""
    return '"' + identifier.replace('"', '""') + '"'


def _compare(src: Database, dst: Database) -> None:
    for table, key in TABLES:
        columns = _known_columns(dst, table)
        if _digest(src, table, key, columns) != _digest(dst, table, key, columns):
            raise CopyError(f"table {table} differs between the source and the copy")


def _digest(db: Database, table: str, key: str, columns: list[str]) -> str:
    digest = hashlib.sha256()
    listed = ", ".join(quoted(name) for name in columns)
    with db.snapshot() as conn:
        for row in conn.tuples(f"SELECT {listed} FROM {quoted(table)} ORDER BY {key}"):
            digest.update(repr(tuple(_plain(value) for value in row)).encode())
    return digest.hexdigest()


def _plain(value: object) -> object:
    return bytes(value) if isinstance(value, memoryview) else value


def run_copy(source: str, destination: str) -> int:
    try:
        result = copy_store(source, destination)
    except CopyError as exc:
        print(f"colibri db copy: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except StorageError as exc:
        print(f"colibri db copy: {exc}", file=sys.stderr)
        return EXIT_USAGE
    total = sum(result.rows.values())
    print(
        f"copied {total:,} rows in {len(result.rows)} tables from {_shown(source)} to {_shown(destination)}"
    )
    print(
        f"verified: every table identical; chain valid ({result.records:,} records, head "
        f"{result.head_hash or '(none)'}), {result.sealed} sealed session(s) match their roots"
    )
    return EXIT_OK


def _shown(target: str) -> str:
    if target.startswith(("postgresql://", "postgres://")):
        from colibri.storage.postgres.urls import redact

        return redact(target)
    return target
