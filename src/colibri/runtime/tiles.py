"""The log as C2SP tlog-tiles under /log/ on `serve --http` (SPEC §16), read-only.

    /log/checkpoint                      the latest stored checkpoint, with its witnesses' cosignatures
    /log/tile/<L>/<N>[.p/<W>]            tile N of level L: 256 (or W) hashes, height 8
    /log/tile/entries/<N>[.p/<W>]        entries 256*N ..: each a 2-byte big-endian length and its data

A log entry's data is its 32-byte entry hash (the leaf data of the RFC 9162 tree), so a level-0
tile hash is SHA-256(0x00 ‖ entry hash). A hash of level L >= 1 is the stored complete subtree of
height 8L over its 256**L entries (log_nodes). Only what the latest checkpoint covers is served:
a tile must fit in its size (otherwise 404), so every tile served is fixed forever, and full tiles
say so (`Cache-Control: public, max-age=31536000, immutable`). With authentication on, every
request needs a bearer token of any scope, Colibri's or the identity provider's (401 otherwise,
naming the RFC 9728 metadata like /mcp's, SPEC §20).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.core.merkle import leaf_hash
from colibri.domains import access
from colibri.domains.log import cosigned, store, tree
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.protected_resource import ProtectedResource

T = TypeVar("T")
HEIGHT, WIDTH = 8, 256
IMMUTABLE = "public, max-age=31536000, immutable"
PARTIAL = "public, max-age=60"
_WIDTH = r"[1-9]\d?|1\d\d|2[0-4]\d|25[0-5]"  # 1..255
_PATH = re.compile(rf"^tile/(entries|0|[1-9][0-9]?)/((?:x\d{{3}}/)*\d{{3}})(?:\.p/({_WIDTH}))?$")


class Reader(Protocol):
    """Runs `work` on the server's database the way a tool call does (runtime/http.py's AppReader)."""

    def read(self, work: Callable[[Database], T]) -> Awaitable[T]: ...


def tile_routes(
    reader: Reader,
    *,
    require_token: bool,
    oauth: OAuthVerifier | None = None,
    resource: ProtectedResource | None = None,
) -> list[Route]:
    """The tiles; with `require_token`, behind Colibri's tokens and `oauth`'s, a 401 challenging
    as `resource` does."""
    challenge = resource.challenge() if resource is not None else 'Bearer realm="colibri"'

    async def serve(request: Request) -> Response:
        if require_token and not await _authorized(reader, request, oauth):
            return Response(
                "a bearer token is required (colibri token create NAME --scope read)\n",
                401,
                headers={"WWW-Authenticate": challenge},
                media_type="text/plain",
            )
        path = request.path_params["path"]
        try:
            if path == "checkpoint":
                note = await reader.read(_checkpoint)
                if note is None:
                    return _missing("no checkpoint has been signed yet")
                return Response(
                    note, headers={"Cache-Control": "no-cache"}, media_type="text/plain; charset=utf-8"
                )
            match = _PATH.match(path)
            if match is None or _encoded(_index(match.group(2))) != match.group(2):
                return _missing("no such resource; see C2SP tlog-tiles")
            level, index, width = match.group(1), _index(match.group(2)), int(match.group(3) or WIDTH)
            data = await reader.read(lambda db: _tile(db, level, index, width))
        except StorageError as exc:
            return Response(f"the log cannot be read now: {exc}\n", 503, media_type="text/plain")
        if data is None:
            return _missing("this tile is not covered by the latest checkpoint")
        cache = IMMUTABLE if width == WIDTH else PARTIAL
        return Response(data, headers={"Cache-Control": cache}, media_type="application/octet-stream")

    return [Route("/log/{path:path}", serve, methods=["GET", "HEAD"])]


def _missing(why: str) -> Response:
    return Response(why + "\n", 404, media_type="text/plain")


async def _authorized(reader: Reader, request: Request, oauth: OAuthVerifier | None) -> bool:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        return False
    token = header[7:].strip()
    if token and oauth is not None and not access.well_formed(token):
        return await oauth.verify_token(token) is not None
    return bool(token) and await reader.read(
        lambda db: access.authenticate(db, token, time.time()) is not None
    )


def _index(text: str) -> int:
    return int("".join(part.removeprefix("x") for part in text.split("/")))


def _encoded(index: int) -> str:
    """N as tlog-tiles writes it: 3-digit groups, all but the last prefixed with x (1234067:
    x001/x234/067), so each tile has one path."""
    groups = [f"{index % 1000:03d}"]
    while index >= 1000:
        index //= 1000
        groups.append(f"x{index % 1000:03d}")
    return "/".join(reversed(groups))


def _checkpoint(db: Database) -> str | None:
    with db.snapshot() as conn:
        latest = store.latest_checkpoint(conn)
        if latest is None or latest.id is None:
            return None
        return cosigned.with_cosignatures(latest.note, cosigned.cosignature_lines(conn, latest.id))


def _tile(db: Database, level: str, index: int, width: int) -> bytes | None:
    """The tile's bytes, or None when the latest checkpoint does not cover all `width` of its hashes."""
    with db.snapshot() as conn:
        latest = store.latest_checkpoint(conn)
        height = 0 if level == "entries" else int(level)
        if latest is None or index * WIDTH + width > latest.size >> (HEIGHT * height):
            return None
        first = index * WIDTH
        if level == "entries":
            return b"".join(len(entry).to_bytes(2, "big") + entry for entry in _entries(conn, first, width))
        if height == 0:
            return b"".join(leaf_hash(entry) for entry in _entries(conn, first, width))
        return b"".join(_subtrees(conn, HEIGHT * height, first, width))


def _entries(conn: Connection, first: int, count: int) -> list[bytes]:
    found = [entry.entry_hash for entry in tree.entries(conn, first, first + count - 1)]
    if len(found) != count:
        raise StorageError(f"the log lacks entries from {first} to {first + count - 1}")
    return found


def _subtrees(conn: Connection, level: int, first: int, count: int) -> list[bytes]:
    ids = [tree.node_id(level, first + i) for i in range(count)]
    marks = ", ".join("?" for _ in ids)
    found = conn.execute(f"SELECT id, hash FROM log_nodes WHERE id IN ({marks})", tuple(ids)).fetchall()
    rows = {int(row[0]): row[1] for row in found}
    if len(rows) != count:
        raise StorageError(f"the stored tree lacks subtrees of level {level} from {first}")
    return [bytes(rows[node]) for node in ids]
