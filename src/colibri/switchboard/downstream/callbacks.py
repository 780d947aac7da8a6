"""What a downstream sends unasked, handed to its owner's `Hooks` through the SDK client's callbacks.

List changes, resource updates and log messages are notifications; sampling, elicitation and roots
are requests, relayed to a client (`Hooks.relay`) and answered with what it answers, or with an
error when no client can.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST

from colibri.switchboard.base import Hooks, ResultT


def client_callbacks(hooks: Hooks) -> dict[str, Any]:
    """The SDK client's callbacks, each handing what the downstream sent to `hooks`."""

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            hooks.tools_changed()
        elif isinstance(message, types.ResourceListChangedNotification | types.PromptListChangedNotification):
            hooks.lists_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            await hooks.notified(message)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        await hooks.notified(types.LoggingMessageNotification(params=params))

    async def relayed(request: types.ServerRequest, result_type: type[ResultT]) -> ResultT | types.ErrorData:
        if hooks.relay is None:
            return types.ErrorData(code=INVALID_REQUEST, message="no client is connected to answer it")
        try:
            return await hooks.relay(request, result_type)
        except MCPError as exc:
            return exc.error

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
