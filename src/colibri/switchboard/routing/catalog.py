"""The index `find_tools` searches (SPEC §23): every downstream's listed tools, the fallback
capabilities and `switchboard_status`, as documents of a BM25 index (storage's `TextIndex`).

A downstream's tools are indexed once per listing, whoever searches: a downstream replaces its
`tools` mapping when a listing differs (after its `list_changed`, or a readiness check), so a
search re-indexes exactly the servers whose mapping is not the one indexed, before it ranks. Who
may see which result is decided per search (search.py), never by the index.

Two signals beside the words, each a lift (fts.py) of a share of the best score:
- the server a query is about (a prior: it reorders the tools the words matched, fts.py): a
  second index holds one document per server (its name, its tools'
  titles and names), searched with the query's words and the lexicon's; each server's tools are
  lifted by `SERVER_LIFT` times its score over the best server's. A fifth of the best match
  reorders close matches and brings forward a server's tools a query names only by what the server
  is about ("remember ..." is memory's), never past a tool matching strongly. On the bench's two
  visible sets 0.15-0.25 gave the same recall, 0.1 and 0.3 less;
- an id in a tool's own id format: a query's token with a digit in it (T-12, 2024-05-01) that an
  argument's `pattern` (its input schema) matches whole lifts that tool by `ID_LIFT`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import mcp_types as types

from colibri.storage.sqlite.fts import Document, Expansion, TextIndex
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.query import name_words
from colibri.switchboard.routing.router import STATUS

SERVER_LIFT, ID_LIFT = 0.2, 0.5
_MAX_PATTERN = 100  # a pattern longer says more than a format
# A quantified group ("(a+)+"), or more than two unbounded repeats ("a*a*a*b"): a pattern that
# could backtrack for long even on a short token, unused.
_NESTED = re.compile(r"\)[*+?{]")
_UNBOUNDED, _MAX_UNBOUNDED = re.compile(r"[*+]|\{\d*,\}"), 2
_SCHEMA_DEPTH = 3  # arguments, their fields, and those fields' own: deeper says little more
_GROUP_FALLBACKS, _GROUP_OWN = "\x00fallbacks", "\x00switchboard"


def document(key: str, tool: types.Tool, server: str = "") -> Document:
    """What is searched of a tool: its name's words, titles, description, arguments and server."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    annotated = tool.annotations.title if tool.annotations is not None else None
    titles = " ".join(dict.fromkeys(title for title in (tool.title, annotated) if title))
    name = name_words(key.partition(".")[2] if server else key)
    arguments = " ".join(_arguments(schema, _SCHEMA_DEPTH))
    return Document(key, name, titles, tool.description or "", arguments, name_words(server))


def id_patterns(tool: types.Tool) -> list[re.Pattern[str]]:
    """The formats of a tool's string arguments (`pattern`), those safe to match a token with."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    found = []
    for spec in (properties if isinstance(properties, dict) else {}).values():
        pattern = spec.get("pattern") if isinstance(spec, dict) else None
        if (
            isinstance(pattern, str)
            and len(pattern) <= _MAX_PATTERN
            and not _NESTED.search(pattern)
            and len(_UNBOUNDED.findall(pattern)) <= _MAX_UNBOUNDED
        ):
            try:
                found.append(re.compile(pattern))
            except re.error:  # a downstream's pattern Python does not read: no format to go by
                continue
    return found


def _arguments(schema: Mapping[str, Any], depth: int) -> Iterator[str]:
    """Each argument's name and description, and those of the fields of an argument's objects and
    lists ("relations": from, to, relation type), as deep as `depth`."""
    properties = schema.get("properties")
    for argument, spec in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        described = spec.get("description")
        yield f"{name_words(argument)} {described if isinstance(described, str) else ''}"
        items = spec.get("items")
        for inner in (spec, items) if isinstance(items, dict) else (spec,):
            if depth > 1 and inner.get("properties"):
                yield from _arguments(inner, depth - 1)


class Catalog:
    """The search index over a board's downstreams, brought up to date before each search."""

    def __init__(
        self, downstreams: Mapping[str, Downstream], fallbacks: Callable[[], Mapping[str, Any]]
    ) -> None:
        self._downstreams = downstreams
        self._fallbacks = fallbacks
        self.index = TextIndex()
        self.index.replace(_GROUP_OWN, [document(STATUS.name, STATUS)])
        self._indexed: dict[str, Mapping[str, types.Tool]] = {}  # each server's listing, as indexed
        self._capabilities: tuple[Any, ...] | None = None
        self.servers = TextIndex()  # one document per server: which server a query is about
        self._patterns: dict[str, list[re.Pattern[str]]] = {}  # tools' id formats, by key

    def search(
        self, words: list[str], also: Sequence[Expansion] = (), ids: Sequence[str] = ()
    ) -> Iterator[str]:
        self._update()
        return self.index.search(words, also, prior=self._prior(words, also), signal=self._ids(ids))

    def _prior(self, words: list[str], also: Sequence[Expansion]) -> Callable[[str], float] | None:
        """Each tool's share of the server a query is about, lifting the tools the query matched."""
        if len(self._indexed) < 2:  # with one server, a prior over servers says nothing
            return None
        scores = self.servers.scores([*words, *(word for _, meant in also for word in meant)])
        if not scores:
            return None
        best = max(scores.values())
        shares = {server: SERVER_LIFT * score / best for server, score in scores.items()}
        return lambda key: shares.get(key.partition(".")[0], 0.0) if "." in key else 0.0

    def _ids(self, ids: Sequence[str]) -> dict[str, float]:
        """The tools taking one of `ids` in their own id format: found by it, matched or not."""
        return {
            key: ID_LIFT
            for key, patterns in (self._patterns.items() if ids else ())
            if any(pattern.fullmatch(token) for pattern in patterns for token in ids)
        }

    def _update(self) -> None:
        changed = False
        for name in self._indexed.keys() - self._downstreams.keys():
            self.index.drop(name)
            del self._indexed[name]
            self._patterns = {
                key: found for key, found in self._patterns.items() if not key.startswith(f"{name}.")
            }
            changed = True
        for name, downstream in self._downstreams.items():
            tools = downstream.tools
            if self._indexed.get(name) is not tools:
                self.index.replace(
                    name, (document(f"{name}.{tool}", spec, name) for tool, spec in tools.items())
                )
                self._indexed[name] = tools
                self._patterns = {
                    key: found for key, found in self._patterns.items() if not key.startswith(f"{name}.")
                }
                for tool, spec in tools.items():
                    if found := id_patterns(spec):
                        self._patterns[f"{name}.{tool}"] = found
                changed = True
        if changed:
            self.servers.replace("", (self._server_document(name) for name in self._indexed))
        fallbacks = self._fallbacks()
        if changed or self._capabilities != (fallbacks,):
            self._capabilities = (fallbacks,)
            self.index.replace(_GROUP_FALLBACKS, self._capability_documents(fallbacks))

    def _server_document(self, name: str) -> Document:
        """A server as what its tools are called: its name, and its tools' titles and names."""
        tools = self._indexed[name]
        titles = (
            tool.title or (tool.annotations.title if tool.annotations else None) for tool in tools.values()
        )
        return Document(
            name,
            name_words(name),
            " ".join(title for title in titles if title),
            " ".join(name_words(tool) for tool in tools),
            "",
        )

    def _capability_documents(self, fallbacks: Mapping[str, Any]) -> Iterator[Document]:
        """A capability is found by its own name and by what any entry of its chain offers."""
        for capability, chain in fallbacks.items():
            texts = []
            for target in chain:
                downstream = self._downstreams.get(target.server)
                tool = None if downstream is None else downstream.tools.get(target.tool)
                if tool is not None:
                    texts.append(document(capability, tool))
            yield Document(
                capability,
                name_words(capability),
                " ".join(text.title for text in texts),
                " ".join(text.description for text in texts),
                " ".join(text.arguments for text in texts),
            )
