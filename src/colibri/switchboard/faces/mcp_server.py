"""The MCP face of the switchboard: the SDK's low-level `Server`, over stdio or Streamable HTTP.

Every request a client makes of a downstream (tools/call, resources/read, prompts/get,
completion/complete, resources/subscribe and unsubscribe, logging/setLevel, subscriptions/listen)
goes to the board with who asked (the token's name over HTTP, `local` otherwise), through the same
admission, rate limits and audit rows as the lean lane's calls; lists show each principal only what
it may call, and a resource update reaches only subscribers whose principal may read its server.

tools/list_changed reaches handshake-era clients as a notification on their connection and
2026-era clients through `subscriptions/listen` (the SDK's listen handler and subscription bus).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Scope

from colibri import __version__
from colibri.core.identity import Identity
from colibri.serving.oauth import OAuthAccess, identity_of_access
from colibri.serving.tracing import sdk_middleware
from colibri.switchboard.base import INVALID_PARAMS, envelopes
from colibri.switchboard.downstream import SUBJECT
from colibri.switchboard.faces.listening import Readers, listen_handler, publishing
from colibri.switchboard.faces.peers import CHANGED, Peers, SessionCaller
from colibri.switchboard.faces.rounds import InputRounds, capabilities_of
from colibri.switchboard.routing import LOCAL, Switchboard

log = logging.getLogger("colibri.switchboard")

SERVER_NAME = "colibri-switchboard"


def build_server(board: Switchboard) -> Gateway:
    """The low-level server whose tools are the switchboard's."""
    bus = InMemorySubscriptionBus()
    peers = Peers()
    readers = Readers()
    rounds = InputRounds(SERVER_NAME)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await board.started()
        return types.ListToolsResult(tools=board.tools(identity_of_request(ctx)))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller, principal = SessionCaller(ctx.session, ctx.request_id), identity_of_request(ctx)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await board.call(params.name, params.arguments, caller, principal)
        # A 2026-era client is asked for input in rounds of its own call (rounds.py).
        if params.request_state is not None:
            return await rounds.resume(params.request_state, params.input_responses, caller)
        meta = ctx.params.get("_meta") if isinstance(ctx.params, Mapping) else None
        return await rounds.call(
            lambda held: board.call(params.name, params.arguments, held, principal),
            capabilities_of(meta if isinstance(meta, Mapping) else None),
            caller,
        )

    async def remember_peer(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        peers.remember(ctx)
        return await call_next(ctx)

    async def tools_changed() -> None:
        await bus.publish(ToolsListChanged())

    async def lists_changed(kind: str) -> None:
        if kind == "resources":
            await bus.publish(ResourcesListChanged())
        elif kind == "prompts":
            await bus.publish(PromptsListChanged())
        await peers.notify(CHANGED[kind])

    passthrough = board.passthrough

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=passthrough.resources(identity_of_request(ctx)))

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=passthrough.templates(identity_of_request(ctx))
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await passthrough.read(params.uri, identity_of_request(ctx))

    async def subscribe(
        ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri, principal = params.uri, identity_of_request(ctx)
        readers.remember(Peers.key(ctx), principal)
        await passthrough.subscribe_for(
            uri, principal, lambda: peers.subscribe(ctx, uri), lambda: peers.unsubscribe(ctx, uri)
        )
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = params.uri
        await passthrough.unsubscribe_for(uri, identity_of_request(ctx), lambda: peers.unsubscribe(ctx, uri))
        return types.EmptyResult()

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=passthrough.prompts(identity_of_request(ctx)))

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await passthrough.get_prompt(params.name, params.arguments, identity_of_request(ctx))

    async def complete(
        ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        return await passthrough.complete(params, identity_of_request(ctx))

    async def set_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        await passthrough.set_level(params.level, identity_of_request(ctx))
        return types.EmptyResult()

    server = Gateway(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "A health-aware gateway: each downstream server's tools are listed as server.tool while "
            "that server is healthy; switchboard_status explains what is missing and why."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=listen_handler(bus, peers, passthrough, identity_of_request),
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # Registered by hand: the constructor argument warns that logging is deprecated in the 2026 era,
    # but handshake-era clients still set the level of the servers behind the switchboard.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    # The SDK's default is its OpenTelemetry span per message: kept only when tracing is on.
    server.middleware = [
        *sdk_middleware(server.middleware),
        remember_peer,
        _subject_handed_on,
        rounds.boundary,
        _refuse_non_object_arguments,
    ]
    server.rounds = rounds
    server.peers = peers
    board.on_tools_changed(tools_changed)
    board.on_lists_changed(lists_changed)
    board.notified = publishing(bus, readers.delivering(peers, board.passthrough))
    board.default_caller = peers.latest
    return server


def identity_of_request(ctx: ServerRequestContext[Any, Any]) -> Identity:
    """Who asked, with what proved it (SPEC §20): a token of the tokens file is named by its SHA-256
    (the digest the file holds), an identity provider's by its issuer and jti, with its groups; so
    the audit row ties the call to it. Else `local`."""
    request = ctx.request
    return identity_of_scope(request.scope) if isinstance(request, Request) else Identity(LOCAL)


def identity_of_scope(scope: Scope) -> Identity:
    """`identity_of_request` of an HTTP request's ASGI scope (the HTTP face's lean lane asks it)."""
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return Identity(LOCAL)
    return identity_of_access(user.access_token)


async def _subject_handed_on(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """The identity provider's token this request came with, where an `"identity": "exchange"`
    server's call trades it (downstream/exchange.py, SPEC §20), and nowhere else: not in Identity."""
    request = ctx.request
    user = request.scope.get("user") if isinstance(request, Request) else None
    access = user.access_token if isinstance(user, AuthenticatedUser) else None
    if not isinstance(access, OAuthAccess):
        return await call_next(ctx)
    handed = SUBJECT.set(access.token)
    try:
        return await call_next(ctx)
    finally:
        SUBJECT.reset(handed)


def principal_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """Who asked: the name of the token the HTTP request proved, else `local`."""
    return identity_of_request(ctx).principal


async def _refuse_non_object_arguments(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    # The SDK would answer a bare -32602 before `call_tool` runs; a tool's caller gets an envelope.
    params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, Mapping) else {}
    arguments, name = params.get("arguments"), params.get("name")
    if isinstance(name, str) and arguments is not None and not isinstance(arguments, dict):
        return envelopes.error(
            INVALID_PARAMS,
            f"arguments for {name} must be a JSON object, got {type(arguments).__name__}; "
            'pass named arguments, e.g. {"key": "value"}, or {} for none',
            tool=name,
            issues=[{"path": "", "message": "expected an object", "type": "object_type"}],
        )
    return await call_next(ctx)


class Gateway(Server[Any]):
    """The SDK server, advertising `tools.listChanged` whichever transport asks.

    The Streamable HTTP session manager builds the initialize answer from the defaults of
    `create_initialization_options`, so the default itself must announce list changes.
    """

    rounds: InputRounds  # the calls held between a 2026-era client's input rounds, shared with the lean lane
    peers: Peers  # the handshake-era connections: where the HTTP lane's calls relay a downstream's requests

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True),
            experimental_capabilities,
            extensions,
        )
