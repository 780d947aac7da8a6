"""Tool search (SPEC §23): `find_tools` and `call_tool` in place of every tool, when the config's
`tool_search.mode` is `search`.

- tools/list shows `find_tools`, `call_tool` and the `keep` tools, sorted by name like every list.
- `find_tools` (query, limit 1..20) answers with the best matching tools' whole definitions, as
  tools/list would show them to this caller: only routable tools the caller's policies admit, never
  one the pins withhold (both are the observers' `hides`). Ranking is BM25 (catalog.py's index).
- `call_tool` (name, arguments) is unwrapped before its `RoutedCall` is made (board.py), so it IS a
  direct call of that tool: admission, rate limits, pins, approvals, fallback and the audit row all
  see the real tool's name. Only a malformed call_tool is answered here (INVALID_PARAMS).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import mcp_types as types

from colibri.storage.sqlite.fts import Expansion
from colibri.switchboard.base import INVALID_PARAMS, envelopes
from colibri.switchboard.config import CALL_TOOL, FIND_TOOLS, ToolSearch
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.catalog import Catalog
from colibri.switchboard.routing.observers import Answer, Observers, Outcome, RoutedCall, Who
from colibri.switchboard.routing.policy import Policies
from colibri.switchboard.routing.query import also_of, ids_of, words_of
from colibri.switchboard.routing.route import Own

LIMIT, MAX_LIMIT = 5, 20


def find_tools_tool(servers: Iterable[str]) -> types.Tool:
    named = ", ".join(servers) or "none reachable now"
    return types.Tool(
        name=FIND_TOOLS,
        title="Find tools",
        description=(
            f"Search the tools of the servers behind this gateway ({named}). Only a few tools are "
            "listed here; the others are found with this. Call it first whenever the task needs a "
            "tool you do not see listed: describe what you want to do in a few plain words (e.g. "
            '"create a task", "current time in Tokyo", "read a file"). It returns the best matching '
            "tools, each with its whole definition (name, description, input schema); call the one "
            "that fits with call_tool, or search again with other words."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, in plain words"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": LIMIT,
                    "description": f"How many tools to return (1-{MAX_LIMIT}, default {LIMIT})",
                },
            },
            "required": ["query"],
        },
        annotations=types.ToolAnnotations(
            title="Find tools",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def call_tool_tool(servers: Iterable[str]) -> types.Tool:
    named = ", ".join(servers) or "none reachable now"
    return types.Tool(
        name=CALL_TOOL,
        title="Call a tool",
        description=(
            f"Call a tool of the servers behind this gateway ({named}) that find_tools returned: its "
            'exact name (e.g. "server.tool") and arguments matching its input schema. It is the same '
            "as calling that tool directly: the same permissions, rate limits, approvals and audit, "
            "and the tool's own result or error comes back."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The tool's name, exactly as find_tools returned it",
                },
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments, as its input schema asks",
                },
            },
            "required": ["name"],
        },
    )


class Search:
    """The two search tools over one board's downstreams and its observers' word on who sees what."""

    def __init__(
        self,
        config: Callable[[], ToolSearch],
        downstreams: Mapping[str, Downstream],
        observers: Observers,
        capability: Callable[[str, Who | None], types.Tool | None],
        fallbacks: Callable[[], Mapping[str, Any]],
    ) -> None:
        self._config = config
        self._downstreams = downstreams
        self._observers = observers
        self._capability = capability
        self.catalog = Catalog(downstreams, fallbacks)

    @property
    def on(self) -> bool:
        return self._config().on

    def listed(self, tools: list[types.Tool], principal: Who | None) -> list[types.Tool]:
        """What tools/list shows: every tool, or the search tools and the kept ones; by name."""
        config = self._config()
        if config.on:
            servers = self.servers(principal)
            kept = [tool for tool in tools if config.keeps(tool.name)]
            tools = [find_tools_tool(servers), call_tool_tool(servers), *kept]
        return sorted(tools, key=lambda tool: tool.name)

    def servers(self, principal: Who | None) -> list[str]:
        """The servers a caller may call something of, named in the search tools' descriptions."""
        policies = Policies.among(self._observers)
        return sorted(
            name
            for name, downstream in self._downstreams.items()
            if policies is None or policies.shows_server(principal, name, downstream.tools)
        )

    def searches(self, name: str) -> bool:
        """Whether a call to `name` is find_tools' search."""
        return name == FIND_TOOLS and self.on

    def unwrapped(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        """A well-formed call_tool as the direct call it stands for; anything else as it came."""
        if not self.on or name != CALL_TOOL or arguments is None:
            return name, arguments
        inner, inner_arguments = arguments.get("name"), arguments.get("arguments")
        if set(arguments) - {"name", "arguments"} or not isinstance(inner, str) or inner in ("", CALL_TOOL):
            return name, arguments
        if inner_arguments is not None and not isinstance(inner_arguments, dict):
            return name, arguments
        return inner, inner_arguments

    def own(self, call: RoutedCall, otherwise: Own) -> Own:
        """The switchboard's own answer to `call`: find_tools, a malformed call_tool, else `otherwise`."""
        if not self.on or call.name not in (FIND_TOOLS, CALL_TOOL):
            return otherwise
        if call.name == CALL_TOOL:
            return lambda name, chain: Answer(Outcome.DENIED, _malformed_call(call.arguments))
        return lambda name, chain: self.find(call.arguments or {}, call.who)

    def find(self, arguments: Mapping[str, Any], who: Who | None) -> Answer:
        query, limit = arguments.get("query", ""), arguments.get("limit", LIMIT)
        unknown = sorted(set(arguments) - {"query", "limit"})
        if unknown or not isinstance(query, str):
            problem = f"unknown argument {unknown[0]!r}"[:80] if unknown else "query must be a string"
            return Answer(
                Outcome.DENIED,
                _invalid(
                    f'find_tools: {problem}; expected {{"query": "what you want to do", '
                    f'"limit": 1-{MAX_LIMIT}}}',
                    FIND_TOOLS,
                ),
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            message = f"find_tools: limit must be an integer from 1 to {MAX_LIMIT}, got {repr(limit)[:40]}"
            return Answer(Outcome.DENIED, _invalid(message, FIND_TOOLS, range=f"1-{MAX_LIMIT}"))
        words, also = words_of(query), also_of(query)
        found = self.best(words, limit, who, also, ids_of(query))
        # The words searched for, not the query: how it was read, and never a long query said back.
        data: dict[str, Any] = {"words": words, "tools": [_definition(tool) for tool in found]}
        if also:
            # The lexicon's words for them, which counted less.
            data["also"] = list(dict.fromkeys(word for _, meant in also for word in meant))
        if not found:
            data["hint"] = (
                "no tool matched; search again with other words for the task, or call_tool "
                "switchboard_status to see which servers are up"
            )
        return Answer(Outcome.OK, envelopes.success(data))

    def best(
        self,
        words: list[str],
        limit: int,
        who: Who | None,
        also: Sequence[Expansion] = (),
        ids: Sequence[str] = (),
    ) -> list[types.Tool]:
        """The `limit` best tools for `words` (and, counting less, `also`; lifted by the ids in
        `ids`, catalog.py) this caller may see and call, best first."""
        found: list[types.Tool] = []
        for key in self.catalog.search(words, also, ids):
            tool = self._shown(key, who)
            if tool is not None:
                found.append(tool)
                if len(found) == limit:
                    break
        return found

    def _shown(self, key: str, who: Who | None) -> types.Tool | None:
        """The tool named `key` as tools/list would show it to `who`, or None if it would not."""
        if self._observers.hides(who, key) is not None:
            return None
        server, dot, tool = key.partition(".")
        downstream = self._downstreams.get(server) if dot else None
        if downstream is None:
            return self._capability(key, who)
        if not downstream.machine.routable or tool not in downstream.tools:
            return None
        return downstream.tools[tool].model_copy(update={"name": key})


def _definition(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


def _invalid(message: str, tool: str, **details: Any) -> types.CallToolResult:
    return envelopes.error(INVALID_PARAMS, message, tool=tool, **details)


def _malformed_call(arguments: Mapping[str, Any] | None) -> types.CallToolResult:
    arguments = arguments or {}
    unknown = sorted(set(arguments) - {"name", "arguments"})
    name, inner = arguments.get("name"), arguments.get("arguments")
    if unknown:
        problem = f"unknown argument {unknown[0]!r}"[:80]
    elif name == CALL_TOOL:
        problem = "it calls the tool it names, never itself: name that tool"
    elif not isinstance(name, str) or not name:
        problem = "name must be a tool's name, as find_tools returned it"
    else:
        problem = f"arguments must be a JSON object, got {type(inner).__name__}"
    return _invalid(
        f'call_tool: {problem}; expected {{"name": "server.tool", "arguments": {{...}}}}', CALL_TOOL
    )
