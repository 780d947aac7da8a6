"""Everything but tools, passed through (SPEC §12): resources, templates, prompts, completion, logging.

Health governs it as it governs tools: only a routable server's resources and prompts are listed,
and only a routable server is asked. Prompts are namespaced `server.prompt` like tools; resource
URIs pass unchanged and are routed by the URI → server map (on a clash the first server in config
order wins, and `clashes()` says so for switchboard_status). A URI no list names goes to the first
routable server with a matching template.

Every request a client makes of a server passes the observers (asked.py) as that server's
`server:method`, as tools/call does: resources/read, prompts/get, completion/complete (on the
prompt's server, or the resource template's), resources/subscribe and unsubscribe, and
logging/setLevel, which names no server: it goes to each connected server that logs and that the
principal's policy does not hide (`server:logging/setLevel`), each one a request of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from colibri.core.shown import quoted, shown, too_long
from colibri.switchboard.base import DownstreamError, PeerError, ResultT
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.asked import answer_of, asked, routed
from colibri.switchboard.routing.observers import LOCAL, Observers, Outcome, Who

RESOURCE_NOT_FOUND = -32002
# The methods observers see, as server:method.
READ, GET, COMPLETE = "resources/read", "prompts/get", "completion/complete"
SUBSCRIBE, UNSUBSCRIBE = "resources/subscribe", "resources/unsubscribe"
SET_LEVEL, LISTEN = "logging/setLevel", "subscriptions/listen"


class Passthrough:
    """Lists and routes the non-tool requests over the supervised downstreams."""

    def __init__(self, downstreams: Mapping[str, Downstream], observers: Observers | None = None) -> None:
        self._downstreams = downstreams
        self._observers = observers or Observers()

    def _routable(self, principal: Who | None = None, method: str = "") -> list[Downstream]:
        """The routable servers, less those whose `method` the observers hide from `principal`."""
        hides = self._observers.hides
        return [
            downstream
            for downstream in self._downstreams.values()
            if downstream.machine.routable
            and not (method and hides(principal, f"{downstream.name}:{method}"))
        ]

    # --- resources -------------------------------------------------------------------------------

    def resources(self, principal: Who | None = None) -> list[types.Resource]:
        seen: set[str] = set()
        listed: list[types.Resource] = []
        for downstream in self._routable(principal, READ):
            for resource in downstream.catalog.resources:
                if resource.uri not in seen:
                    seen.add(resource.uri)
                    listed.append(resource)
        return listed

    def templates(self, principal: Who | None = None) -> list[types.ResourceTemplate]:
        seen: set[str] = set()
        listed: list[types.ResourceTemplate] = []
        for downstream in self._routable(principal, READ):
            for template in downstream.catalog.templates:
                if template.uri_template not in seen:
                    seen.add(template.uri_template)
                    listed.append(template)
        return listed

    def clashes(self) -> list[dict[str, Any]]:
        """URIs more than one server lists, and which one serves them (the first in config order)."""
        owners: dict[str, list[str]] = {}
        for downstream in self._downstreams.values():
            for resource in downstream.catalog.resources:
                owners.setdefault(resource.uri, []).append(downstream.name)
        return [
            {"uri": uri, "served_by": names[0], "shadowed": names[1:]}
            for uri, names in owners.items()
            if len(names) > 1
        ]

    def owner(self, uri: str) -> Downstream:
        """The server a URI goes to, or an MCP error saying why there is none."""
        for exact in (True, False):
            candidates = [
                downstream
                for downstream in self._downstreams.values()
                if (
                    downstream.catalog.has_resource(uri)
                    if exact
                    else downstream.catalog.matches_template(uri)
                )
            ]
            routable = [downstream for downstream in candidates if downstream.machine.routable]
            if routable:
                return routable[0]
            if candidates:
                reasons = "; ".join(downstream.machine.why_not() for downstream in candidates)
                raise MCPError(
                    INTERNAL_ERROR, f"SERVICE_UNAVAILABLE: resource {shown(uri)} is unavailable: {reasons}"
                )
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"resource not found: {shown(uri)}; resources/list and resources/templates/list list them",
        )

    async def read(self, uri: str, principal: Who = LOCAL) -> types.ReadResourceResult:
        def request(uri: str) -> types.ClientRequest:
            return types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))

        call = routed(uri, {"uri": uri}, principal, READ)
        return await asked(
            self._observers, call, lambda: (self.owner(uri), uri), request, types.ReadResourceResult
        )

    def readable(self, principal: Who, server: str) -> bool:
        """Whether `principal` may read `server`'s resources (its updates go only to those who may)."""
        return self._observers.hides(principal, f"{server}:{READ}") is None

    async def subscribe_for(
        self, uri: str, principal: Who, hold: Callable[[], bool], release: Callable[[], object]
    ) -> None:
        """A client's resources/subscribe, admitted and recorded; `hold()` takes the client's
        subscription (True: the first, so the server is asked), `release()` gives it back."""
        first = False

        def request(uri: str) -> types.ClientRequest | None:
            nonlocal first
            first = hold()
            return types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)) if first else None

        call = routed(uri, {"uri": uri}, principal, SUBSCRIBE)
        try:
            await asked(self._observers, call, lambda: (self.owner(uri), uri), request, types.EmptyResult)
        except MCPError:
            if first:
                release()
            raise
        if first and (downstream := self._downstreams.get(call.server or "")) is not None:
            downstream.subscriptions.add(uri)

    async def unsubscribe_for(self, uri: str, principal: Who, release: Callable[[], bool]) -> None:
        """A client's resources/unsubscribe, admitted and recorded; `release()` is True when it was
        the last subscription to `uri`, and only then is the server asked."""
        call = routed(uri, {"uri": uri}, principal, UNSUBSCRIBE)

        def request(uri: str) -> types.ClientRequest | None:
            if not release():
                return None
            if (downstream := self._downstreams.get(call.server or "")) is not None:
                downstream.subscriptions.discard(uri)
            return types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))

        await asked(self._observers, call, lambda: (self.owner(uri), uri), request, types.EmptyResult)

    async def admit_listen(self, uris: list[str], principal: Who) -> None:
        """Admit and record a `subscriptions/listen` stream once per server whose URIs it names
        (`server:subscriptions/listen`); raises the first refusal. A URI no server offers now is left
        to the stream (honored, never fires)."""
        by_server: dict[str, list[str]] = {}
        for uri in uris:
            try:
                by_server.setdefault(self.owner(uri).name, []).append(uri)
            except MCPError:
                continue
        # The servers the principal may not use first: a refused stream leaves no row saying `ok`.
        hidden = self._observers.hides
        for server, named in sorted(
            by_server.items(), key=lambda item: not hidden(principal, f"{item[0]}:{LISTEN}")
        ):
            call = routed(", ".join(named), {"resource_subscriptions": named}, principal, LISTEN)
            await asked(self._observers, call, partial(self._named, server), _nothing, types.EmptyResult)

    def _named(self, server: str) -> tuple[Downstream, str]:
        return self._downstreams[server], server

    async def subscribe(self, uri: str) -> None:
        """Subscribe the server of `uri` (a listen stream's, admitted already by `admit_listen`)."""
        downstream = self.owner(uri)
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
        await _ask(downstream, request, types.EmptyResult)
        downstream.subscriptions.add(uri)

    async def unsubscribe(self, uri: str) -> None:
        downstream = self.owner(uri)
        downstream.subscriptions.discard(uri)
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
        await _ask(downstream, request, types.EmptyResult)

    # --- prompts ---------------------------------------------------------------------------------

    def prompts(self, principal: Who | None = None) -> list[types.Prompt]:
        return [
            prompt.model_copy(update={"name": f"{downstream.name}.{prompt.name}"})
            for downstream in self._routable(principal, GET)
            for prompt in downstream.catalog.prompts
        ]

    def _prompt_owner(self, name: str) -> tuple[Downstream, str]:
        server, dot, prompt = name.partition(".")
        downstream = self._downstreams.get(server) if dot and not too_long(name) else None  # never a 1 MB key
        if downstream is None or not any(p.name == prompt for p in downstream.catalog.prompts):
            raise MCPError(
                INVALID_PARAMS,
                f"unknown prompt {quoted(name)}; prompts/list shows the prompts offered now (server.prompt)",
            )
        if not downstream.machine.routable:
            raise MCPError(
                INTERNAL_ERROR,
                f"SERVICE_UNAVAILABLE: prompt {name} is unavailable: {downstream.machine.why_not()}",
            )
        return downstream, prompt

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, principal: Who = LOCAL
    ) -> types.GetPromptResult:
        def request(prompt: str) -> types.ClientRequest:
            return types.GetPromptRequest(
                params=types.GetPromptRequestParams(name=prompt, arguments=arguments)
            )

        call = routed(name, {"name": name, "arguments": dict(arguments or {})}, principal, GET)
        return await asked(
            self._observers, call, lambda: self._prompt_owner(name), request, types.GetPromptResult
        )

    # --- completion and logging ------------------------------------------------------------------

    async def complete(
        self, params: types.CompleteRequestParams, principal: Who = LOCAL
    ) -> types.CompleteResult:
        ref = params.ref

        def owner() -> tuple[Downstream, str]:
            if isinstance(ref, types.PromptReference):
                return self._prompt_owner(ref.name)
            return self._template_owner(ref.uri), ref.uri

        def request(there: str) -> types.ClientRequest:
            named = params
            if isinstance(ref, types.PromptReference):
                named = params.model_copy(update={"ref": ref.model_copy(update={"name": there})})
            return types.CompleteRequest(params=named)

        # The prompt or template named, the argument and its context are hashed into the row.
        asked_for = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        name = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        call = routed(name, asked_for, principal, COMPLETE)
        return await asked(self._observers, call, owner, request, types.CompleteResult)

    def _template_owner(self, template: str) -> Downstream:
        for downstream in self._routable():
            if any(t.uri_template == template for t in downstream.catalog.templates):
                return downstream
        raise MCPError(INVALID_PARAMS, f"no routable server offers the resource template {quoted(template)}")

    async def set_level(self, level: types.LoggingLevel, principal: Who = LOCAL) -> None:
        """Pass the level to every connected server that logs and that the principal's policy does not
        hide, each admitted and recorded as `server:logging/setLevel`; a refusal stops the rest and is
        the answer, a server that fails does not stop the rest."""

        def request(_: str) -> types.ClientRequest:
            return types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))

        for downstream in list(self._downstreams.values()):
            name = downstream.name
            if downstream.session is None or not downstream.catalog.logging:
                continue
            if self._observers.hides(principal, f"{name}:{SET_LEVEL}") is not None:
                continue  # not a server this principal may use: the level is not its to set
            call = routed(level, {"level": level}, principal, SET_LEVEL)
            answer = await answer_of(
                self._observers, call, partial(self._named, name), request, types.EmptyResult
            )
            if answer.error is not None and (answer.outcome is Outcome.DENIED or not answer.tried):
                raise answer.error


async def _ask(downstream: Downstream, request: types.ClientRequest, result_type: type[ResultT]) -> ResultT:
    """One request to one server; its JSON-RPC errors pass through, others name the server."""
    try:
        return await downstream.request(request, result_type)
    except PeerError as exc:
        raise MCPError(exc.code, exc.rpc_message, exc.data) from None
    except DownstreamError as exc:
        raise MCPError(INTERNAL_ERROR, f"UPSTREAM_ERROR: {downstream.name}: {exc.message}") from None


def _nothing(_: str) -> None:
    """Nothing to send: the request is admitted and recorded, and acts at the switchboard."""
    return None
