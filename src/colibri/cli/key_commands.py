"""`colibri key generate`, `key show` and `key rotate` (SPEC §11, §14)."""

from __future__ import annotations

import sys
from pathlib import Path

from colibri.cli.log_store import Unusable, log_store, usage
from colibri.domains.log.keys import read_any_signer, read_signer, write_key_file
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import ALG_COSIGNATURE, ALG_ED25519, NoteError, Signer
from colibri.serving.exits import EXIT_OK


def key_generate(name: str, out: str, *, cosigner: bool = False) -> int:
    """Write a new signer key (or a witness's cosigner key) to `out` (mode 0600); print its verifier key."""
    try:
        signer = Signer.generate(name, ALG_COSIGNATURE if cosigner else ALG_ED25519)
        write_key_file(Path(out), signer)
    except NoteError as exc:
        return usage("key generate", str(exc))
    print(signer.verifier().key())
    return EXIT_OK


def key_show(file: str) -> int:
    """Print the verifier key of the signer or cosigner key in `file`."""
    try:
        signer = read_any_signer(Path(file))
    except NoteError as exc:
        return usage("key show", str(exc))
    print(signer.verifier().key())
    return EXIT_OK


def key_rotate(
    db_path: Path | str, old_file: str, new_file: str, origin: str | None, export: Path | None
) -> int:
    """Hand the log over from the key in `old_file` to the one in `new_file`: one checkpoint
    signed by both, naming the new key; print it."""
    try:
        old, new = read_signer(Path(old_file)), read_signer(Path(new_file))
        if old.verifier() == new.verifier():
            raise Unusable(
                f"--from and --to hold the same key ({old.verifier().key()}); --to names the new key"
            )
        with log_store(db_path, readonly=False) as db, db.atomic() as conn:
            handover = Notary(old, origin, export).hand_over(conn, new)
    except (Unusable, NoteError) as exc:
        return usage("key rotate", str(exc))
    sys.stdout.write(handover.note)
    print(
        f"colibri key rotate: checkpoint {handover.size} is signed by both keys; from now on the log is "
        f"signed by {new.verifier().key()}: set COLIBRI_SIGNING_KEY={new_file} for every server",
        file=sys.stderr,
    )
    return EXIT_OK
