"""The verifiable log's commands (SPEC §11), added to `colibri`'s parser by cli/__init__.py.

colibri key generate --name NAME --out FILE
colibri key show FILE
colibri key rotate --from OLD_FILE --to NEW_FILE
colibri checkpoint
colibri log entries [--from I] [--to J] [--rows]
colibri log find --record SEQ | --action CORRELATION_ID
colibri prove inclusion INDEX... [--size N] [--timings]
colibri prove consistency OLD NEW
colibri verify --checkpoint FILE --key VERIFIER_KEY [--witness-policy FILE]
colibri witness serve --http HOST:PORT --key FILE --db FILE --log "ORIGIN VKEY" ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from colibri.cli import witness as witness_cli
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_USAGE

COMMANDS = frozenset({"key", "checkpoint", "log", "prove", "witness"})
_DB_HELP = "database file (default: COLIBRI_DB_PATH or data/colibri.db)"
_URL_HELP = "a PostgreSQL store, postgresql://... (default: COLIBRI_DB_URL when --db is not given)"


def add_commands(commands: Any, verify: argparse.ArgumentParser) -> None:
    """Add the log's commands to the `colibri` subparsers, and --checkpoint/--key to verify."""
    key = commands.add_parser(
        "key", help="make, show or rotate the checkpoint signing key", description="Signing keys."
    )
    key_commands = key.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    generate = key_commands.add_parser(
        "generate",
        help="write a new signer key file and print its verifier key",
        description="Write a new Ed25519 signer key in the note key format (PRIVATE+KEY+NAME+HASH+KEY) to "
        "FILE with mode 0600, and print the verifier key (NAME+HASH+KEY) that checks its checkpoints. "
        "Point COLIBRI_SIGNING_KEY at FILE. An existing FILE is never overwritten.",
    )
    generate.add_argument("--name", required=True, help="key name, e.g. example.com/colibri (no spaces or +)")
    generate.add_argument("--out", required=True, metavar="FILE", help="where to write the signer key")
    generate.add_argument(
        "--cosigner",
        action="store_true",
        help="a witness's cosigner key instead (C2SP tlog-cosignature, signature type 0x04)",
    )
    show = key_commands.add_parser(
        "show",
        help="print a key file's verifier key",
        description="Print the verifier key (NAME+HASH+KEY) of the signer key in FILE: the key that "
        "`verify --checkpoint --key` takes. Reads FILE only.",
    )
    show.add_argument("file", metavar="FILE", help="a signer key file (`colibri key generate`)")
    rotate = key_commands.add_parser(
        "rotate",
        help="hand the log's signing over to a new key",
        description="Record a key handover: sign one checkpoint of the log as it stands with the key in "
        "OLD_FILE and the key in NEW_FILE, naming the new verifier key in it, store and export it, and print "
        "it. From then on servers must sign with NEW_FILE (a boot with the old key exits 2), and "
        "`verify --checkpoint --key OLD` follows the handover to checkpoints the new key signed. Stop the "
        "servers first, then restart them with COLIBRI_SIGNING_KEY=NEW_FILE.",
    )
    rotate.add_argument(
        "--from", dest="old", required=True, metavar="OLD_FILE", help="the current signer key"
    )
    rotate.add_argument("--to", dest="new", required=True, metavar="NEW_FILE", help="the new signer key")
    rotate.add_argument("--db", metavar="PATH", help=_DB_HELP)
    rotate.add_argument("--db-url", metavar="URL", help=_URL_HELP)

    checkpoint = commands.add_parser(
        "checkpoint",
        help="print the latest signed checkpoint of the log, making one first if the log grew",
        description="Print the latest C2SP checkpoint of the database's verifiable log with its witnesses' "
        "cosignatures. If the log grew since it was made, sign a new one first (with COLIBRI_SIGNING_KEY, or "
        "colibri.key beside the database), store it, and export it to COLIBRI_CHECKPOINT_EXPORT when set. "
        "With COLIBRI_WITNESS_POLICY, submit it to every witness once first (a witness that fails is "
        "reported on stderr and skipped).",
    )
    checkpoint.add_argument(
        "--status",
        action="store_true",
        help="print each witness's last cosigned size and last attempt instead; sign and send nothing",
    )
    checkpoint.add_argument("--db", metavar="PATH", help=_DB_HELP)
    checkpoint.add_argument("--db-url", metavar="URL", help=_URL_HELP)

    log = commands.add_parser("log", help="read the verifiable log", description="Read the verifiable log.")
    log_commands = log.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    entries = log_commands.add_parser(
        "entries",
        help="print entry hashes, one per line",
        description="Print the log's entry hashes in lowercase hex, one per line, from index I to J "
        "inclusive (default: all of them). Read-only.",
    )
    entries.add_argument("--from", dest="first", type=int, metavar="I", help="first index (default 0)")
    entries.add_argument("--to", dest="last", type=int, metavar="J", help="last index (default: the last)")
    entries.add_argument(
        "--rows",
        action="store_true",
        help="after each hash (tab-separated): its index, what it logs (action #N, record #N) and, for a "
        "call, its principal, tool, outcome and a refusal's reason: message",
    )
    entries.add_argument("--db", metavar="PATH", help=_DB_HELP)
    entries.add_argument("--db-url", metavar="URL", help=_URL_HELP)
    find = log_commands.add_parser(
        "find",
        help="print the log index of a thought record or a call",
        description="Print the index of the log entry that logs thought record SEQ, or the call whose "
        "correlation id is CORRELATION_ID (e.g. for `colibri prove inclusion`). Exit 2 when there is no "
        "such record or call, 1 when no entry logs it. Read-only.",
    )
    target = find.add_mutually_exclusive_group(required=True)
    target.add_argument("--record", type=int, metavar="SEQ", help="a thought record's seq")
    target.add_argument("--action", metavar="CORRELATION_ID", help="a call's correlation id (actions table)")
    find.add_argument("--db", metavar="PATH", help=_DB_HELP)
    find.add_argument("--db-url", metavar="URL", help=_URL_HELP)

    prove = commands.add_parser("prove", help="print an RFC 9162 proof", description="RFC 9162 proofs.")
    prove_commands = prove.add_subparsers(dest="prove_command", metavar="KIND", required=True)
    inclusion = prove_commands.add_parser(
        "inclusion",
        help="prove entry INDEX is in the tree of N entries",
        description='Print {"index", "size", "entry_hash", "audit_path"}: an RFC 9162 §2.1.3 inclusion proof '
        "of entry INDEX in the tree of the log's first N entries (default: all), one JSON line per INDEX "
        "given. Read-only.",
    )
    inclusion.add_argument("index", type=int, metavar="INDEX", nargs="+")
    inclusion.add_argument(
        "--timings",
        action="store_true",
        help="then print each proof's own time on stderr (`inclusion INDEX: 0.412 ms (0.398 ms CPU)`): "
        "its reads and hashing, without the command's start",
    )
    inclusion.add_argument("--size", type=int, metavar="N", help="tree size (default: the log's size)")
    inclusion.add_argument("--db", metavar="PATH", help=_DB_HELP)
    inclusion.add_argument("--db-url", metavar="URL", help=_URL_HELP)
    consistency = prove_commands.add_parser(
        "consistency",
        help="prove the tree of NEW entries extends the tree of OLD entries",
        description='Print {"old_size", "new_size", "proof"}: an RFC 9162 §2.1.4 consistency proof. '
        "Read-only.",
    )
    consistency.add_argument("old", type=int, metavar="OLD")
    consistency.add_argument("new", type=int, metavar="NEW")
    consistency.add_argument("--db", metavar="PATH", help=_DB_HELP)
    consistency.add_argument("--db-url", metavar="URL", help=_URL_HELP)

    witness_cli.add_parser(commands)
    verify.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="a signed checkpoint kept elsewhere: check the log alone against it (needs --key; with "
        "--db or --db-url, the store's own check runs too)",
    )
    verify.add_argument(
        "--key", metavar="VERIFIER_KEY", help="the verifier key (NAME+HASH+KEY) or a file holding it"
    )
    verify.add_argument(
        "--witness-policy",
        metavar="FILE",
        help="with --checkpoint: also require the policy's quorum of valid witness cosignatures on it",
    )


def _store(args: argparse.Namespace, config: Config) -> Path | str:
    """--db-url, else --db, else COLIBRI_DB_URL, else COLIBRI_DB_PATH (as plain `verify` chooses)."""
    url: str | None = getattr(args, "db_url", None)
    if url is not None:
        return url
    if getattr(args, "db", None):
        return Path(args.db)
    return config.db_url or config.db_path


def run(args: argparse.Namespace, config: Config) -> int | None:
    """Run a log command; None when `args` is not one (plain `verify` stays cli/__init__.py's)."""
    from colibri.cli import checkpoint_commands, key_commands, verify_checkpoint
    from colibri.cli import log_commands as commands

    if args.command == "witness":
        return witness_cli.run(args, config.log_level)
    db = _store(args, config)
    if args.command == "key" and args.key_command == "generate":
        return key_commands.key_generate(args.name, args.out, cosigner=args.cosigner)
    if args.command == "key" and args.key_command == "show":
        return key_commands.key_show(args.file)
    if args.command == "key":
        return key_commands.key_rotate(db, args.old, args.new, config.log_origin, config.checkpoint_export)
    if args.command == "checkpoint":
        return checkpoint_commands.checkpoint(db, config, status=args.status)
    if args.command == "log" and args.log_command == "find":
        return commands.log_find(db, args.record, args.action)
    if args.command == "log":
        return commands.log_entries(db, args.first, args.last, rows=args.rows)
    if args.command == "prove" and args.prove_command == "inclusion":
        return commands.prove_inclusion(db, args.index, args.size, timings=args.timings)
    if args.command == "prove":
        return commands.prove_consistency(db, args.old, args.new)
    if args.command == "verify" and (args.checkpoint, args.key, args.witness_policy) != (None, None, None):
        if args.checkpoint is None or args.key is None or args.session is not None:
            print(
                "colibri verify: --checkpoint FILE and --key VERIFIER_KEY go together (with --witness-policy "
                "FILE if you like), without --session",
                file=sys.stderr,
            )
            return EXIT_USAGE
        return verify_checkpoint.verify_checkpoint(
            db, args.checkpoint, args.key, config.log_origin, args.witness_policy
        )
    return None
