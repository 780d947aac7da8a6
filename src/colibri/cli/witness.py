"""`colibri witness serve --http HOST:PORT --key FILE --db FILE --log "ORIGIN VKEY" ...` (SPEC §16),
behind the checks of every HTTP face (SPEC §21): `--allow-host` names and the `COLIBRI_HTTP_*` limits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from colibri.cli.log_store import usage
from colibri.serving.exits import EXIT_OK, EXIT_USAGE


def add_parser(commands: Any) -> None:
    witness = commands.add_parser(
        "witness",
        help="run a transparency log witness (C2SP tlog-witness)",
        description="A witness for other logs, Colibri's or anyone's.",
    )
    actions = witness.add_subparsers(dest="witness_command", metavar="ACTION", required=True)
    serve = actions.add_parser(
        "serve",
        help="cosign the checkpoints of the logs it follows",
        description="Serve the C2SP tlog-witness protocol at http://HOST:PORT/add-checkpoint: verify each "
        "submitted checkpoint's signature by its log's key and its consistency with the latest one cosigned "
        "for that log, then keep it and answer with a cosignature/v1 line (404 unknown log, 403 bad "
        "signature, 400 bad request, 409 with the size held, 422 bad proof). The latest cosigned checkpoint "
        "of each log lives in --db, its own SQLite file, and is served to monitors at "
        "GET /<sha256(origin) in hex>/checkpoint.",
    )
    serve.add_argument("--http", required=True, metavar="HOST:PORT", help="where to listen (PORT: loopback)")
    serve.add_argument(
        "--key", required=True, metavar="FILE", help="the cosigner key (`colibri key generate --cosigner`)"
    )
    serve.add_argument("--db", required=True, metavar="FILE", help="the witness's own SQLite file")
    serve.add_argument(
        "--log",
        action="append",
        required=True,
        metavar='"ORIGIN VKEY"',
        help="a log to follow: its checkpoint origin and its verifier key (repeatable)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients use to reach the witness (Host/Origin allow-list); repeatable",
    )


def run(args: argparse.Namespace, log_level: Any) -> int:
    from colibri.cli.http_address import http_limits
    from colibri.core.errors import StorageError
    from colibri.domains.log.checkpoint import valid_origin
    from colibri.domains.log.keys import read_signer
    from colibri.domains.log.note import ALG_COSIGNATURE, NoteError, Verifier, shown
    from colibri.serving import logs
    from colibri.serving.address import parse_address

    try:
        host, port = parse_address(args.http)
        cosigner = read_signer(Path(args.key), ALG_COSIGNATURE)
    except (ValueError, NoteError) as exc:
        return usage("witness serve", str(exc))
    followed: dict[str, Verifier] = {}
    for value in args.log:
        origin, _, vkey = value.strip().rpartition(" ")
        try:
            key = Verifier.parse(vkey)
        except NoteError as exc:
            return usage("witness serve", f'--log {shown(value)}: {exc}; write --log "ORIGIN VKEY"')
        if not valid_origin(origin) or origin in followed:
            return usage(
                "witness serve", f'--log {shown(value)}: no origin, or one named twice; "ORIGIN VKEY"'
            )
        followed[origin] = key
    limits = http_limits("witness serve")
    if limits is None:
        return EXIT_USAGE
    import anyio

    from colibri.witness.serve import WitnessConfig, serve_witness

    logs.configure(log_level)
    try:
        config = WitnessConfig(host, port, cosigner, Path(args.db), followed, args.allow_host, limits)
        anyio.run(serve_witness, config)
    except StorageError as exc:
        print(f"colibri witness serve: cannot use {args.db}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
