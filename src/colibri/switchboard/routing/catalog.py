"""The index `find_tools` searches (SPEC §23): every downstream's listed tools, the fallback
capabilities and `switchboard_status`, as documents of a BM25 index (storage's `TextIndex`).

A downstream's tools are indexed once per listing, whoever searches: a downstream replaces its
`tools` mapping when a listing differs (after its `list_changed`, or a readiness check), so a
search re-indexes exactly the servers whose mapping is not the one indexed, before it ranks. Who
may see which result is decided per search (search.py), never by the index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import mcp_types as types

from colibri.storage.sqlite.fts import MAX_EXPANSIONS, Document, Expansion, TextIndex
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.lexicon import CATEGORIES
from colibri.switchboard.routing.router import STATUS

MAX_QUERY_WORDS = 64  # past these a query says nothing more, and each word costs a lookup
_SCHEMA_DEPTH = 3  # arguments, their fields, and those fields' own: deeper says little more
# A word boundary inside a name: lower→Upper ("taskCreate"), and the end of an acronym ("HTTPServer").
_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
# Digits apart from letters ("utf8" → utf 8): a number rarely says which tool, its word may.
_DIGITS = re.compile(r"(\d+)")
# Words that say nothing about which tool (a user's "I want to ...", "can you ...").
_FILLER_TEXT = (
    "a an the i me my we you your it its to of for in on at by with and or from into is are be "
    "can could would should please want need some any this that these those do does how what "
    "just let lets am was were has have had get got our us them they there here so "
    # The rest of everyday English's function words and request padding, none a tool's word.
    "about above again all also am an as because been being both but did doing during each else "
    "ever every few further he her hers him his if itself just like more most much myself no nor "
    "not now only other ought ours ourselves own same she shall than their theirs themselves then "
    "thing things something anything stuff through too under until very which while who whom "
    "will with yet yours yourself called named really actually maybe still kind sort bit quick "
    "quickly one ones i'd i'm i've you're okay ok hey hi thanks thank"
)
_FILLER = frozenset(_FILLER_TEXT.split())
_GROUP_FALLBACKS, _GROUP_OWN = "\x00fallbacks", "\x00switchboard"


def name_words(name: str) -> str:
    """A name as words: split at `_`, `-`, `.` and changes of case (`getCurrentTime` → get current time)."""
    return " ".join(_CASE.sub(" ", part) for part in _WORD.findall(name))


def words_of(query: str) -> list[str]:
    """A query as plain words (never FTS5 syntax), lowercased, filler dropped unless that is all."""
    words = _split(query)
    meaningful = [word for word in words if word not in _FILLER and len(word) > 1 and not word.isdigit()]
    return list(dict.fromkeys(meaningful or words))[:MAX_QUERY_WORDS]


def also_of(query: str) -> list[Expansion]:
    """The lexicon's words for the query's words and phrases (lexicon.py), minus the query's own,
    each with the words that said it: searched as well, counting less (fts.py). A phrase ("add
    up") is read before its words ("add")."""
    words, at = _split(query), 0
    also: list[Expansion] = []
    own = set(words)
    while at < len(words):
        for length in range(_LONGEST, 0, -1):
            said = words[at : at + length]
            found = _LEXICON.get(tuple(_inflected(word) for word in said))
            if found is not None and len(said) == length:
                meant = [word for word in found if word not in own]
                if meant:  # what counts as said: the phrase's own words, not its filler ("make a")
                    also.append(([word for word in said if word not in _FILLER], meant))
                at += length
                break
        else:
            at += 1
    return also[:MAX_EXPANSIONS]


def _split(query: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(_DIGITS.sub(r" \1 ", name_words(query)))]


def _inflected(word: str) -> str:
    """The lexicon's word a query's word is: itself if the lexicon has it ("times" is multiply,
    "time" is not), else its stem ("folders" → folder, "stored" → store, "deleting" → delete)."""
    stems = [word]
    if word.endswith("ies"):
        stems.append(word[:-3] + "y")
    elif word.endswith("s") and not word.endswith("ss"):
        stems.append(word[:-1])
    elif word.endswith("ied"):
        stems.append(word[:-3] + "y")
    elif word.endswith("ed"):
        stems += [word[:-1], word[:-2], word[:-3]]  # stored, remembered, stopped
    elif word.endswith("ing"):
        stems += [word[:-3], word[:-3] + "e", word[:-4]]  # remembering, storing, setting
    return next((stem for stem in stems if stem in _KEY_WORDS and len(stem) > 2), word)


def _lexicon() -> dict[tuple[str, ...], tuple[str, ...]]:
    table: dict[tuple[str, ...], tuple[str, ...]] = {}
    for category in CATEGORIES:
        for said, meant in category:
            for phrase in said.split(","):
                key = tuple(word.lower() for word in _WORD.findall(_DIGITS.sub(r" \1 ", phrase)))
                table[key] = tuple(dict.fromkeys(table.get(key, ()) + tuple(meant.split())))
    return table


_LEXICON = _lexicon()
_LONGEST = max(len(key) for key in _LEXICON)
_KEY_WORDS = frozenset(word for key in _LEXICON for word in key)


def document(key: str, tool: types.Tool, server: str = "") -> Document:
    """What is searched of a tool: its name's words, titles, description, arguments and server."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    annotated = tool.annotations.title if tool.annotations is not None else None
    titles = " ".join(dict.fromkeys(title for title in (tool.title, annotated) if title))
    name = name_words(key.partition(".")[2] if server else key)
    arguments = " ".join(_arguments(schema, _SCHEMA_DEPTH))
    return Document(key, name, titles, tool.description or "", arguments, name_words(server))


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

    def search(self, words: list[str], also: Sequence[Expansion] = ()) -> Iterator[str]:
        self._update()
        return self.index.search(words, also)

    def _update(self) -> None:
        changed = False
        for name in self._indexed.keys() - self._downstreams.keys():
            self.index.drop(name)
            del self._indexed[name]
            changed = True
        for name, downstream in self._downstreams.items():
            tools = downstream.tools
            if self._indexed.get(name) is not tools:
                self.index.replace(
                    name, (document(f"{name}.{tool}", spec, name) for tool, spec in tools.items())
                )
                self._indexed[name] = tools
                changed = True
        fallbacks = self._fallbacks()
        if changed or self._capabilities != (fallbacks,):
            self._capabilities = (fallbacks,)
            self.index.replace(_GROUP_FALLBACKS, self._capability_documents(fallbacks))

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
