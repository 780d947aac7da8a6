"""The witness policy file (SPEC §16, `COLIBRI_WITNESS_POLICY`, `verify --witness-policy`).

    # comments and blank lines are ignored (as in C2SP tlog-policy)
    witness NAME VKEY URL     a cosigner (VKEY of type 0x04) reached at its submission prefix URL
    quorum K                  K valid cosignatures from these witnesses are required (1 <= K <= N)

Items are separated by spaces or tabs. Names and keys are unique. Any other line, a bad key, a
URL that is not http(s), or a quorum that the witnesses cannot meet is a PolicyError naming the
file and line. The URL may be left out in a policy used only to verify (`--witness-policy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from colibri.domains.log.cosignature import parse_cosigner_key, timestamp_of
from colibri.domains.log.note import NoteError, Verifier, shown

MAX_POLICY_BYTES = 1 << 20


class PolicyError(ValueError):
    """The policy file cannot be used; the message names the file, the line and what would be right."""


@dataclass(frozen=True, slots=True)
class Witness:
    name: str
    key: Verifier
    url: str | None  # the submission prefix: POST <url>/add-checkpoint


@dataclass(frozen=True, slots=True)
class WitnessPolicy:
    witnesses: tuple[Witness, ...]
    quorum: int

    def cosigned_by(self, note: str) -> tuple[list[Witness], list[str]]:
        """The witnesses whose cosignature on `note` verifies, and why the others' do not."""
        good, problems = [], []
        for witness in self.witnesses:
            try:
                timestamp = timestamp_of(note, witness.key)
            except NoteError as exc:
                problems.append(f"{witness.name}: {exc}")
                continue
            if timestamp is None:
                problems.append(f"{witness.name}: no cosignature")
            else:
                good.append(witness)
        return good, problems


def read_policy(path: Path, *, urls_required: bool) -> WitnessPolicy:
    """The policy in `path`; PolicyError when it cannot be read or used."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POLICY_BYTES + 1)
        if len(data) > MAX_POLICY_BYTES:
            raise PolicyError(f"witness policy {path} is over 1 MiB; a policy is a few lines")
        text = data.decode("utf-8")
    except OSError as exc:
        raise PolicyError(f"cannot read witness policy {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise PolicyError(f"witness policy {path} is not UTF-8 text") from None
    return parse_policy(text, str(path), urls_required=urls_required)


def parse_policy(text: str, source: str, *, urls_required: bool) -> WitnessPolicy:
    witnesses: list[Witness] = []
    quorum: int | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        where = f"witness policy {source} line {number}"
        items = raw.replace("\t", " ").split()
        if not items or items[0].startswith("#"):
            continue
        if items[0] == "witness" and len(items) in (3, 4):
            witnesses.append(_witness(items, where, urls_required, witnesses))
        elif items[0] == "quorum" and len(items) == 2:
            if quorum is not None:
                raise PolicyError(f"{where}: a second quorum line; a policy has exactly one")
            if not items[1].isascii() or not items[1].isdigit():
                raise PolicyError(f"{where}: quorum {shown(items[1])} is not a number; write `quorum K`")
            quorum = int(items[1])
            if not 1 <= quorum <= len(witnesses):
                raise PolicyError(
                    f"{where}: quorum {quorum} needs from 1 to {len(witnesses)} cosignatures: the witnesses "
                    "it counts are listed above it"
                )
        else:
            raise PolicyError(
                f"{where}: {shown(raw.strip())} is not `witness NAME VKEY URL`, `quorum K`, a comment or"
                " blank"
            )
    if quorum is None:
        raise PolicyError(f"witness policy {source} has no `quorum K` line")
    return WitnessPolicy(tuple(witnesses), quorum)


def _witness(items: list[str], where: str, urls_required: bool, known: list[Witness]) -> Witness:
    name, vkey = items[1], items[2]
    url = items[3] if len(items) == 4 else None
    try:
        key = parse_cosigner_key(vkey)
    except NoteError as exc:
        raise PolicyError(
            f"{where}: witness {shown(name)} has a bad key: {exc} (`colibri key show`)"
        ) from None
    if url is None and urls_required:
        raise PolicyError(f"{where}: witness {shown(name)} has no URL; write `witness NAME VKEY URL`")
    if url is not None and not url.startswith(("http://", "https://")):
        raise PolicyError(f"{where}: witness {shown(name)}'s URL {shown(url)} is not http:// or https://")
    if any(w.name == name for w in known) or any(w.key.public_key == key.public_key for w in known):
        raise PolicyError(f"{where}: witness {shown(name)} repeats a name or a key listed above")
    return Witness(name, key, None if url is None else url.rstrip("/"))
