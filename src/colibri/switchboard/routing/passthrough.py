"""Everything but tools, passed through (SPEC §12): resources, templates, prompts, completion, logging.

Health governs it as it governs tools: only a routable server's resources and prompts are listed,
and only a routable server is asked. Prompts are namespaced `server.prompt` like tools; resource
URIs pass unchanged and are routed by the URI → server map (on a clash the first server in config
order wins, and `clashes()` says so for switchboard_status). A URI no list names goes to the first
routable server with a matching template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from colibri.switchboard.base import DownstreamError, PeerError, ResultT
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.asked import asked
from colibri.switchboard.routing.observers import LOCAL, Observers, RoutedCall

RESOURCE_NOT_FOUND = -32002
READ, GET = "resources/read", "prompts/get"  # the methods observers see, as server:method


class Passthrough:
    """Lists and routes the non-tool requests over the supervised downstreams."""

    def __init__(self, downstreams: Mapping[str, Downstream], observers: Observers | None = None) -> None:
        self._downstreams = downstreams
        self._observers = observers or Observers()

    def _routable(self, principal: str | None = None, method: str = "") -> list[Downstream]:
        """The routable servers, less those whose `method` the observers hide from `principal`."""
        hides = self._observers.hides
        return [
            downstream
            for downstream in self._downstreams.values()
            if downstream.machine.routable
            and not (method and hides(principal, f"{downstream.name}:{method}"))
        ]

    # --- resources -------------------------------------------------------------------------------

    def resources(self, principal: str | None = None) -> list[types.Resource]:
        seen: set[str] = set()
        listed: list[types.Resource] = []
        for downstream in self._routable(principal, READ):
            for resource in downstream.catalog.resources:
                if resource.uri not in seen:
                    seen.add(resource.uri)
                    listed.append(resource)
        return listed

    def templates(self, principal: str | None = None) -> list[types.ResourceTemplate]:
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
                    INTERNAL_ERROR, f"SERVICE_UNAVAILABLE: resource {uri} is unavailable: {reasons}"
                )
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"resource not found: {uri}; resources/list and resources/templates/list show what is offered",
        )

    async def read(self, uri: str, principal: str = LOCAL) -> types.ReadResourceResult:
        def request(uri: str) -> types.ClientRequest:
            return types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))

        call = RoutedCall(uri, {"uri": uri}, principal, READ)
        return await asked(
            self._observers, call, lambda: (self.owner(uri), uri), request, types.ReadResourceResult
        )

    async def subscribe(self, uri: str) -> None:
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

    def prompts(self, principal: str | None = None) -> list[types.Prompt]:
        return [
            prompt.model_copy(update={"name": f"{downstream.name}.{prompt.name}"})
            for downstream in self._routable(principal, GET)
            for prompt in downstream.catalog.prompts
        ]

    def _prompt_owner(self, name: str) -> tuple[Downstream, str]:
        server, dot, prompt = name.partition(".")
        downstream = self._downstreams.get(server) if dot else None
        if downstream is None or not any(p.name == prompt for p in downstream.catalog.prompts):
            raise MCPError(
                INVALID_PARAMS,
                f"unknown prompt {name!r}; prompts/list shows the prompts offered now (server.prompt)",
            )
        if not downstream.machine.routable:
            raise MCPError(
                INTERNAL_ERROR,
                f"SERVICE_UNAVAILABLE: prompt {name} is unavailable: {downstream.machine.why_not()}",
            )
        return downstream, prompt

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, principal: str = LOCAL
    ) -> types.GetPromptResult:
        def request(prompt: str) -> types.ClientRequest:
            return types.GetPromptRequest(
                params=types.GetPromptRequestParams(name=prompt, arguments=arguments)
            )

        call = RoutedCall(name, {"name": name, "arguments": dict(arguments or {})}, principal, GET)
        return await asked(
            self._observers, call, lambda: self._prompt_owner(name), request, types.GetPromptResult
        )

    # --- completion and logging ------------------------------------------------------------------

    async def complete(self, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            downstream, prompt = self._prompt_owner(ref.name)
            params = params.model_copy(update={"ref": ref.model_copy(update={"name": prompt})})
        else:
            downstream = self._template_owner(ref.uri)
        return await _ask(downstream, types.CompleteRequest(params=params), types.CompleteResult)

    def _template_owner(self, template: str) -> Downstream:
        for downstream in self._routable():
            if any(t.uri_template == template for t in downstream.catalog.templates):
                return downstream
        raise MCPError(INVALID_PARAMS, f"no routable server offers the resource template {template!r}")

    async def set_level(self, level: types.LoggingLevel) -> None:
        """Pass the level to every connected server that logs; one that fails does not stop the rest."""
        request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))
        for downstream in self._downstreams.values():
            if downstream.session is not None and downstream.catalog.logging:
                try:
                    await downstream.request(request, types.EmptyResult)
                except DownstreamError:
                    continue


async def _ask(downstream: Downstream, request: types.ClientRequest, result_type: type[ResultT]) -> ResultT:
    """One request to one server; its JSON-RPC errors pass through, others name the server."""
    try:
        return await downstream.request(request, result_type)
    except PeerError as exc:
        raise MCPError(exc.code, exc.rpc_message, exc.data) from None
    except DownstreamError as exc:
        raise MCPError(INTERNAL_ERROR, f"UPSTREAM_ERROR: {downstream.name}: {exc.message}") from None
