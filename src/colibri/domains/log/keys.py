"""Signer key files: written once with mode 0600, read back, or created beside the database."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from colibri.domains.log.note import ALG_COSIGNATURE, ALG_ED25519, NoteError, Signer

DEFAULT_KEY_FILE = "colibri.key"
MAX_KEY_FILE_BYTES = 4096  # a key file is one line of about 100 characters


class KeyFileError(NoteError):
    """A signer key file cannot be written or read."""


def write_key_file(path: Path, signer: Signer) -> None:
    """Create `path` holding the signer key, readable by its owner only; never overwrite.

    The key is written to a private temporary file first and then linked into place, so a
    reader (another process booting at the same moment) never sees a half-written key.
    """
    path = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".colibri-key-")
    except OSError as exc:
        raise KeyFileError(f"cannot create key file {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:  # mkstemp files are mode 0600
            handle.write(signer.key() + "\n")
        os.link(temporary, path)
    except FileExistsError:
        raise KeyFileError(
            f"{path} already exists; a key file is never overwritten, choose another --out"
        ) from None
    except OSError as exc:
        raise KeyFileError(f"cannot create key file {path}: {exc.strerror}") from exc
    finally:
        os.unlink(temporary)


def read_signer(path: Path, alg: int = ALG_ED25519) -> Signer:
    """The signer key in `path` (`alg` ALG_COSIGNATURE: a witness's cosigner key)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_KEY_FILE_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"cannot read signer key file {path}: {exc}") from exc
    try:
        return Signer.parse(text, alg)
    except NoteError as exc:
        what = "signer key" if alg == ALG_ED25519 else "cosigner key (`colibri key generate --cosigner`)"
        raise KeyFileError(f"{path} does not hold a {what} ({exc})") from exc


def read_any_signer(path: Path) -> Signer:
    """The signer or cosigner key in `path`, whichever it holds."""
    try:
        return read_signer(path)
    except KeyFileError as exc:
        try:
            return read_signer(path, ALG_COSIGNATURE)
        except KeyFileError:
            raise exc from None


def default_key_path(db_path: Path) -> Path:
    """Where FULL and TEST keep the key when COLIBRI_SIGNING_KEY is unset: beside the database."""
    return Path(db_path).parent / DEFAULT_KEY_FILE


def load_or_create(path: Path, name: str) -> tuple[Signer, bool]:
    """The signer key in `path`, creating a new one named `name` there if there is none.

    Returns the signer and whether it was created now. Two processes racing to create it
    both end up with the one that was written first.
    """
    if not path.exists():
        try:
            write_key_file(path, Signer.generate(name))
            return read_signer(path), True
        except KeyFileError:
            if not path.exists():
                raise
    return read_signer(path), False
