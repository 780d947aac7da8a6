"""C2SP tlog-witness `add-checkpoint`: the request read strictly, the answer decided in the spec's order.

    400  the body is not `old N`, at most 63 base64 hash lines, a blank line and a checkpoint
         (or it is over 1 MiB), a number in it has more than 20 digits (no uint64 has), or old N
         exceeds the checkpoint's size
    404  the checkpoint's origin is not one of the logs this witness follows
    403  no valid signature by the log's key (or a line by that key whose signature fails)
    409  N is not the size of the latest checkpoint cosigned for the origin, or the checkpoint
         has that size but another root (a fork): the body is the size held and a newline, as
         text/x.tlog.size
    422  a checkpoint of size 0 whose root is not the empty tree's, a proof with old 0, or a
         proof that does not verify (one from a size to itself is empty)
    200  the witness's cosignature line; the checkpoint is kept as the origin's latest first

`decide` runs inside one write transaction of the witness's file, so the check of N and the
update of the latest checkpoint are one step (the spec's race between two submissions).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from colibri.core.database import Connection
from colibri.core.merkle import EMPTY_ROOT, HASH_SIZE
from colibri.domains.log.checkpoint import Checkpoint, parse_body
from colibri.domains.log.cosignature import cosign
from colibri.domains.log.note import NoteError, Signer, Verifier, open_note, split_note
from colibri.domains.log.rfc9162 import verify_consistency
from colibri.witness import state

MAX_BODY_BYTES = 1 << 20
MAX_PROOF_LINES = 63
# A size is a uint64: 20 digits at most. Longer numbers are refused before int() is asked (which
# refuses over 4,300 digits with a ValueError of its own, and spends quadratic time below that).
MAX_DIGITS = 20
TEXT = "text/plain; charset=utf-8"
SIZE = "text/x.tlog.size"


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: str
    content_type: str = TEXT
    reason: str = ""  # what the witness's log says when the body alone does not (a 409's size)


@dataclass(frozen=True, slots=True)
class Request:
    old: int
    proof: list[bytes]
    note: str


def read_request(body: bytes) -> Request | Answer:
    """The request in `body`, or the 400 answer saying what is wrong with it."""
    if len(body) > MAX_BODY_BYTES:
        return Answer(400, "the request is over 1 MiB\n")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Answer(400, "the request is not UTF-8 text\n")
    head, blank, note = text.partition("\n\n")
    if not blank:
        return Answer(400, "the request has no blank line between the proof and the checkpoint\n")
    lines = head.split("\n")
    old = _decimal(lines[0].removeprefix("old ")) if lines[0].startswith("old ") else None
    if old is None:
        return Answer(
            400,
            f"the request does not start with `old N`, N a decimal of at most {MAX_DIGITS} digits"
            " without leading zeroes\n",
        )
    if len(lines) - 1 > MAX_PROOF_LINES:
        return Answer(400, f"the request has more than {MAX_PROOF_LINES} consistency proof lines\n")
    proof = []
    for line in lines[1:]:
        try:
            node = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            node = b""
        if len(node) != HASH_SIZE:
            return Answer(400, "a consistency proof line is not a base64 SHA-256 hash\n")
        proof.append(node)
    return Request(old, proof, note)


def decide(
    conn: Connection, request: Request, logs: dict[str, Verifier], cosigner: Signer, now: int
) -> Answer:
    """The answer to an add-checkpoint request; a 200 keeps the checkpoint as the origin's latest."""
    try:
        text, lines = split_note(request.note)
        checkpoint = parse_body(text)
    except NoteError as exc:
        return Answer(400, f"the checkpoint is malformed: {exc}\n")
    key = logs.get(checkpoint.origin)
    if key is None:
        return Answer(404, "this witness does not follow that log (unknown origin)\n")
    try:
        open_note(request.note, key)
    except NoteError as exc:
        return Answer(403, f"{exc}\n")
    if request.old > checkpoint.size:
        return Answer(400, f"old {request.old} exceeds the checkpoint's size {checkpoint.size}\n")
    latest = state.cosigned(conn, checkpoint.origin)
    held = 0 if latest is None else latest.size
    if request.old != held:
        return Answer(409, f"{held}\n", SIZE)
    problem = _inconsistency(request, checkpoint, latest)
    if problem is not None:
        return Answer(422, problem + "\n")
    if latest is not None and checkpoint.size == held and checkpoint.root != latest.root:
        # Two trees of one size under one origin: the spec answers 409 with the size held, as for
        # a stale `old`, and the witness's log says which it was.
        fork = f"the checkpoint has the size {held} cosigned before but another root (a fork?)"
        return Answer(409, f"{held}\n", SIZE, fork)
    line = cosign(text, cosigner, now)
    verified = "".join(f"{each.line}\n" for each in lines if (each.name, each.key_id) == (key.name, key.hash))
    state.keep(
        conn, checkpoint.origin, state.Cosigned(checkpoint.size, checkpoint.root, f"{text}\n{verified}{line}")
    )
    return Answer(200, line)


def _inconsistency(request: Request, checkpoint: Checkpoint, latest: state.Cosigned | None) -> str | None:
    if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
        return "a checkpoint of size 0 must have the empty tree's root"
    if request.old == 0:
        return "old 0 takes no consistency proof" if request.proof else None
    assert latest is not None  # old == the held size, which is not 0
    if request.old == checkpoint.size:
        return f"a consistency proof from size {request.old} to itself is empty" if request.proof else None
    if not verify_consistency(request.old, checkpoint.size, latest.root, checkpoint.root, request.proof):
        return f"the consistency proof from size {request.old} to {checkpoint.size} does not verify"
    return None


def _decimal(text: str) -> int | None:
    if (
        not text.isascii()
        or not text.isdigit()
        or (len(text) > 1 and text[0] == "0")
        or len(text) > MAX_DIGITS
    ):
        return None
    return int(text)
