"""What a downstream sends unasked, handed on through the SDK client's callbacks.

List changes and resource updates are the connection's news, handed to its owner's `Hooks`. Log
messages, sampling, elicitation and roots belong to a call: they go to that call's `Caller` (the
`CALL` the SDK runs the callback under, owners.py) and to nobody else. One that belongs to no
single call is dropped and counted; a dropped request is answered with an error, so the downstream
does not wait for an answer that will never come.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST

from colibri.switchboard.base import Hooks, ResultT
from colibri.switchboard.downstream.owners import CALL, DROPS

KINDS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


def client_callbacks(hooks: Hooks, server: str) -> dict[str, Any]:
    """The SDK client's callbacks for the connection to `server`."""

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            hooks.tools_changed()
        elif isinstance(message, types.ResourceListChangedNotification | types.PromptListChangedNotification):
            hooks.lists_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            await hooks.notified(message)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        owner = CALL.get()
        if owner is None:
            DROPS.note(server, "log")
            return
        await owner.log(params)

    async def relayed(request: types.ServerRequest, result_type: type[ResultT]) -> ResultT | types.ErrorData:
        owner = CALL.get()
        if owner is None:
            DROPS.note(server, KINDS.get(request.method, request.method))
            return types.ErrorData(
                code=INVALID_REQUEST,
                message=f"{request.method} belongs to no single call in flight, so no client is asked",
            )
        try:
            answer: ResultT = await owner.request(request, result_type)
        except MCPError as exc:
            return exc.error
        return answer

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await relayed(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await relayed(types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return await relayed(types.ListRootsRequest(), types.ListRootsResult)

    return {
        "message_handler": on_message,
        "logging_callback": on_log,
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "list_roots_callback": roots,
    }
