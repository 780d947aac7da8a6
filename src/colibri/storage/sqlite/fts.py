"""`TextIndex`: BM25 ranking over small documents, served by SQLite FTS5 in memory (SPEC §23).

Here, beside the backend, because only this package talks to the SQLite driver; the switchboard's
tool search (switchboard/routing/search.py) keeps one. Documents come in groups (one downstream's
tools) and a group is replaced whole, so a listing is indexed once, whoever searches it.

A query is a list of plain words, each matched as a quoted FTS5 string joined by OR: nothing a
caller writes (`"`, `*`, `NEAR(`, `OR`, `:`) is ever read as FTS5 syntax.

A search may bring `also`: other ways to say some of its words (a lexicon's: "folder" → directory),
each as (the words said, the words meant). They are ranked by queries of their own and count less
than the caller's words, so an expansion never outranks a literal match: the words meant count
`ALSO_WEIGHT` of their BM25 score, and where the words said match documents themselves, a document
found only through what they mean gets less from it than the best document having words said.

A search may also bring what a caller knows of some documents beside their words, each as a share
of the best score added to a document's, so scaled to whatever the words scored: a `prior` (such as
the server a query is about) reorders the documents the words matched; a `signal` (such as an id
in a tool's id format) also brings forward a document no word matched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

# How much a word counts in each column, over the description's 1: a word of the name says most;
# the server's name says which server, not which of its tools.
WEIGHTS = (6.0, 3.0, 1.0, 1.5, 1.0)
COLUMNS = ("name", "title", "description", "arguments", "server")
# What a lexicon's word counts beside one the caller wrote.
ALSO_WEIGHT = 0.6
# Below the best literal match, however strong the expansions: a margin, so never level with it.
_BELOW = 0.95
MAX_EXPANSIONS = 16  # a query's first ones say enough
BLENDED = 256  # the documents each lookup of a blended search ranks; the rest follow unblended
# Another way to say some words: (the words said, the words meant).
Expansion = tuple[Sequence[str], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable thing: `key` comes back from a search; the five texts are ranked."""

    key: str
    name: str
    title: str
    description: str
    arguments: str
    server: str = ""


class TextIndex:
    """An in-memory FTS5 table (porter stemming, Unicode words), searched by BM25."""

    def __init__(self) -> None:
        # One connection, used from the event loop's thread only.
        self._db = sqlite3.connect(":memory:", isolation_level=None)
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5("
            "key UNINDEXED, grp UNINDEXED, name, title, description, arguments, server, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self.builds = 0  # how many times a group was (re)indexed: a listing is indexed once

    def replace(self, group: str, documents: Iterable[Document]) -> None:
        """Index `documents` as the whole of `group`, dropping what it held before."""
        rows = [(d.key, group, d.name, d.title, d.description, d.arguments, d.server) for d in documents]
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM docs WHERE grp = ?", (group,))
            self._db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.builds += 1

    def drop(self, group: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM docs WHERE grp = ?", (group,))

    def search(
        self,
        words: Sequence[str],
        also: Sequence[Expansion] = (),
        *,
        prior: Callable[[str], float] | None = None,
        signal: Mapping[str, float] | None = None,
        batch: int = 64,
    ) -> Iterator[str]:
        """The keys of the documents matching any of `words` (or of `also`, counting less), best
        first (BM25, plus each key's `prior(key)` and `signal` times the best score), fetched in batches
        so a caller that stops early reads few rows."""
        seen: set[str] = set()
        if also or prior or signal:
            # The best few hundred blended; past them (a caller that may see none of those),
            # the rest of what anything matched, as if all were the caller's words.
            for key in self._blended(words, also, prior, signal or {}):
                seen.add(key)
                yield key
            words = [*words, *_meant(also[:MAX_EXPANSIONS])]
        if not words:
            return
        query = f"SELECT key FROM docs WHERE docs MATCH ? ORDER BY {_RANK} LIMIT ? OFFSET ?"
        offset = 0
        while True:
            keys = [row[0] for row in self._db.execute(query, (_match(words), batch, offset))]
            yield from (key for key in keys if key not in seen)
            if len(keys) < batch:
                return
            offset += batch

    def _blended(
        self,
        words: Sequence[str],
        also: Sequence[Expansion],
        prior: Callable[[str], float] | None,
        signal: Mapping[str, float],
    ) -> list[str]:
        """A few lookups, whatever the number of expansions: BM25 sums what each word of an OR
        adds, so the words meant are scored together as if apart. Those of words said that match
        nothing themselves have no literal match to stay below; the others are scaled below the
        best document having any of their words said."""
        bound = [(said, meant) for said, meant in also[:MAX_EXPANSIONS] if said and self._any(said)]
        free = [expansion for expansion in also[:MAX_EXPANSIONS] if expansion not in bound]
        scores = self._scores(words)
        extra = {key: ALSO_WEIGHT * score for key, score in self._scores(_meant(free)).items()}
        if bound:
            literal = self._scores([word for said, _ in bound for word in said])
            scaled = {key: ALSO_WEIGHT * score for key, score in self._scores(_meant(bound)).items()}
            beyond = [score for key, score in scaled.items() if key not in literal]
            scale = min(1.0, _BELOW * max(literal.values()) / max(beyond)) if beyond else 1.0
            for key, score in scaled.items():  # scaled, keeping their order
                extra[key] = extra.get(key, 0.0) + score * (1.0 if key in literal else scale)
        for key, score in extra.items():
            scores[key] = scores.get(key, 0.0) + score
        best = max(scores.values(), default=1.0)  # nothing matched: the signals alone order
        if prior is not None:
            for key in scores:
                scores[key] += prior(key) * best
        for key, share in signal.items():
            scores[key] = scores.get(key, 0.0) + share * best
        return sorted(scores, key=lambda key: -scores[key])

    def _any(self, words: Sequence[str]) -> bool:
        """Whether any document has any of `words`."""
        return (
            self._db.execute("SELECT 1 FROM docs WHERE docs MATCH ? LIMIT 1", (_match(words),)).fetchone()
            is not None
        )

    def scores(self, words: Sequence[str]) -> dict[str, float]:
        """The BM25 scores of the documents best matching any of `words`, higher is better."""
        return self._scores(words)

    def _scores(self, words: Sequence[str]) -> dict[str, float]:
        """The BM25 scores of the best `BLENDED` documents matching any of `words`, higher is
        better (FTS5's is negative). Ordered and cut in SQLite: scoring every row out is slower."""
        if not words:
            return {}
        query = f"SELECT key, -{_RANK} FROM docs WHERE docs MATCH ? ORDER BY {_RANK} LIMIT ?"
        return dict(self._db.execute(query, (_match(words), BLENDED)))

    def close(self) -> None:
        self._db.close()


_RANK = f"bm25(docs, 0, 0, {', '.join(str(weight) for weight in WEIGHTS)})"


def _meant(also: Sequence[Expansion]) -> list[str]:
    return list(dict.fromkeys(word for _, meant in also for word in meant))


def _match(words: Sequence[str]) -> str:
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
