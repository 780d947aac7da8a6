"""`TextIndex`: BM25 ranking over small documents, served by SQLite FTS5 in memory (SPEC §23).

Here, beside the backend, because only this package talks to the SQLite driver; the switchboard's
tool search (switchboard/routing/search.py) keeps one. Documents come in groups (one downstream's
tools) and a group is replaced whole, so a listing is indexed once, whoever searches it.

A query is a list of plain words, each matched as a quoted FTS5 string joined by OR: nothing a
caller writes (`"`, `*`, `NEAR(`, `OR`, `:`) is ever read as FTS5 syntax.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

# How much a word counts in each column, over the description's 1: a word of the name says most.
WEIGHTS = (6.0, 3.0, 1.0, 1.5)
COLUMNS = ("name", "title", "description", "arguments")


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable thing: `key` comes back from a search; the four texts are ranked."""

    key: str
    name: str
    title: str
    description: str
    arguments: str


class TextIndex:
    """An in-memory FTS5 table (porter stemming, Unicode words), searched by BM25."""

    def __init__(self) -> None:
        # One connection, used from the event loop's thread only.
        self._db = sqlite3.connect(":memory:", isolation_level=None)
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5("
            "key UNINDEXED, grp UNINDEXED, name, title, description, arguments, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self.builds = 0  # how many times a group was (re)indexed: a listing is indexed once

    def replace(self, group: str, documents: Iterable[Document]) -> None:
        """Index `documents` as the whole of `group`, dropping what it held before."""
        rows = [(d.key, group, d.name, d.title, d.description, d.arguments) for d in documents]
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM docs WHERE grp = ?", (group,))
            self._db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", rows)
        self.builds += 1

    def drop(self, group: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM docs WHERE grp = ?", (group,))

    def search(self, words: Sequence[str], *, batch: int = 64) -> Iterator[str]:
        """The keys of the documents matching any of `words`, best first (BM25), fetched in batches
        so a caller that stops early reads few rows."""
        if not words:
            return
        match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
        weights = ", ".join(str(weight) for weight in WEIGHTS)
        query = (
            f"SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, {weights}) LIMIT ? OFFSET ?"
        )
        offset = 0
        while True:
            keys = [row[0] for row in self._db.execute(query, (match, batch, offset))]
            yield from keys
            if len(keys) < batch:
                return
            offset += batch

    def close(self) -> None:
        self._db.close()
