"""The log as C2SP tlog-tiles under /log/ on `serve --http` (SPEC §16): the bytes of each tile and
entry bundle, the caching headers, only what the latest checkpoint covers, and the read-token rule.
(Go's tlog reads the same tiles in tests/interop/test_go_tlog.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from colibri.core.merkle import leaf_hash
from colibri.domains.proofs.merkle import tree_root
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, colibri, query
from tests.http.helpers import HttpServer, get, make_token, running

RECORDS = 600  # level-0 tiles 0 and 1 full, tile 2 partial (88), level-1 tile 0 partial (2)
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass
class Served:
    server: HttpServer
    token: str
    entries: list[bytes]
    note: str

    def get(self, path: str, token: str | None = "default") -> tuple[int, dict[str, str], bytes]:
        bearer = self.token if token == "default" else token
        headers = {} if bearer is None else {"Authorization": f"Bearer {bearer}"}
        return get(f"{self.server.base}/log/{path}", headers)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("tiles")
    env = clean_env(folder)
    key, _ = generate_key(folder, env)
    env["COLIBRI_SIGNING_KEY"] = str(key)
    token = make_token(env, "reader", "read")  # first: it boots the store, which adopts its rows once
    db = SQLiteDatabase.open(folder / "colibri.db")
    migrate(db, MIGRATIONS)
    build_chain(db, RECORDS)
    db.close()
    note = colibri("checkpoint", env=env).stdout
    entries = [
        bytes(row[0])
        for row in query(folder / "colibri.db", "SELECT entry_hash FROM log_entries ORDER BY idx")
    ]
    with running(env, folder) as server:
        yield Served(server, token, entries, note)


def test_the_checkpoint_is_the_latest_signed_one(served: Served) -> None:
    status, headers, body = served.get("checkpoint")
    assert status == 200 and body.decode() == served.note
    assert headers["content-type"].startswith("text/plain") and headers["cache-control"] == "no-cache"


def test_level_0_tiles_hold_the_leaf_hashes(served: Served) -> None:
    leaves = [leaf_hash(entry) for entry in served.entries]
    status, headers, body = served.get("tile/0/001")
    assert status == 200 and body == b"".join(leaves[256:512])
    assert headers["cache-control"] == IMMUTABLE and headers["content-type"] == "application/octet-stream"
    status, headers, body = served.get("tile/0/002.p/88")
    assert status == 200 and body == b"".join(leaves[512:600])
    assert headers["cache-control"] != IMMUTABLE
    assert served.get("tile/0/002.p/5")[2] == b"".join(leaves[512:517])  # a narrower one, as of an older size


def test_level_1_tiles_hold_the_roots_of_full_level_0_tiles(served: Served) -> None:
    status, _, body = served.get("tile/1/000.p/2")
    assert status == 200
    assert body == tree_root(served.entries[:256]) + tree_root(served.entries[256:512])


def test_entry_bundles_hold_each_entry_with_its_length(served: Served) -> None:
    status, headers, body = served.get("tile/entries/000")
    assert status == 200 and headers["cache-control"] == IMMUTABLE
    assert body == b"".join(b"\x00\x20" + entry for entry in served.entries[:256])
    status, _, body = served.get("tile/entries/002.p/88")
    assert len(served.entries) == 600
    assert body == b"".join(b"\x00\x20" + e for e in served.entries[512:])


@pytest.mark.parametrize(
    "path",
    [
        "tile/0/003",  # beyond the checkpoint
        "tile/0/002",  # not full yet
        "tile/0/002.p/89",
        "tile/1/000",
        "tile/2/000.p/1",
        "tile/0/2",  # not three digits
        "tile/0/x000/001",  # a leading zero group: still 1, but not how N is written
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/entries/003",
        "tile/64/000",
        "nothing",
    ],
)
def test_what_is_not_a_served_tile_is_404(served: Served, path: str) -> None:
    status, _, _ = served.get(path)
    assert status == 404, path


def test_a_read_token_is_required(served: Served) -> None:
    for token in (None, "col_not-a-token"):
        status, headers, _ = served.get("tile/0/000", token)
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    assert served.get("checkpoint", None)[0] == 401
