"""The index `find_tools` searches (SPEC §23): every downstream's listed tools, the fallback
capabilities and `switchboard_status`, as documents of a BM25 index (storage's `TextIndex`).

A downstream's tools are indexed once per listing, whoever searches: a downstream replaces its
`tools` mapping when a listing differs (after its `list_changed`, or a readiness check), so a
search re-indexes exactly the servers whose mapping is not the one indexed, before it ranks. Who
may see which result is decided per search (search.py), never by the index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import mcp_types as types

from colibri.storage.sqlite.fts import Document, TextIndex
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.router import STATUS

MAX_QUERY_WORDS = 64  # past these a query says nothing more, and each word costs a lookup
# A word boundary inside a name: lower→Upper ("taskCreate"), and the end of an acronym ("HTTPServer").
_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
# Words that say nothing about which tool (a user's "I want to ...", "can you ...").
_FILLER_TEXT = (
    "a an the i me my we you your it its to of for in on at by with and or from into is are be "
    "can could would should please want need some any this that these those do does how what"
)
_FILLER = frozenset(_FILLER_TEXT.split())
# The words people use for what tool definitions say otherwise (a user's "folder" is a tool's
# "directory"): each query word brings these along. Common computing words only, never a tool's name.
_ALSO = {
    "folder": "directory",
    "folders": "directories",
    "dir": "directory",
    "picture": "image",
    "photo": "image",
    "ticket": "task",
    "todo": "task",
    "item": "task",
    "issue": "task",
    "add": "create",
    "new": "create",
    "remove": "delete",
    "forget": "delete",
    "rename": "move",
    "remember": "memory",
    "plus": "sum",
    "repeat": "echo",
    "ls": "list directory",
    "mkdir": "create directory",
    "cat": "read text",
    "rm": "delete",
}
_GROUP_FALLBACKS, _GROUP_OWN = "\x00fallbacks", "\x00switchboard"


def name_words(name: str) -> str:
    """A name as words: split at `_`, `-`, `.` and changes of case (`getCurrentTime` → get current time)."""
    return " ".join(_CASE.sub(" ", part) for part in _WORD.findall(name))


def words_of(query: str) -> list[str]:
    """A query as plain words (never FTS5 syntax), lowercased, filler dropped unless that is all."""
    words = [word.lower() for word in _WORD.findall(name_words(query))]
    meaningful = [word for word in words if word not in _FILLER and len(word) > 1] or words
    also = [extra for word in meaningful for extra in _ALSO.get(word, "").split()]
    return list(dict.fromkeys(meaningful + also))[:MAX_QUERY_WORDS]


def document(key: str, tool: types.Tool) -> Document:
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    arguments = []
    for argument, spec in (properties if isinstance(properties, dict) else {}).items():
        described = spec.get("description") if isinstance(spec, dict) else None
        arguments.append(f"{name_words(argument)} {described if isinstance(described, str) else ''}")
    title = tool.title or (tool.annotations.title if tool.annotations is not None else None) or ""
    return Document(key, name_words(key), title, tool.description or "", " ".join(arguments))


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

    def search(self, words: list[str]) -> Iterator[str]:
        self._update()
        return self.index.search(words)

    def _update(self) -> None:
        changed = False
        for name in self._indexed.keys() - self._downstreams.keys():
            self.index.drop(name)
            del self._indexed[name]
            changed = True
        for name, downstream in self._downstreams.items():
            tools = downstream.tools
            if self._indexed.get(name) is not tools:
                self.index.replace(name, (document(f"{name}.{tool}", spec) for tool, spec in tools.items()))
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
