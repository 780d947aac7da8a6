"""The lean lane to a Streamable HTTP downstream: tools/call POSTed as raw JSON-RPC, beside the SDK.

Through the SDK a routed call to an HTTP downstream built a pydantic request, passed it through the
client's dispatcher, two memory streams and a task group of the transport, and parsed the answer back
into models; in a profile of the HTTP face before an HTTP downstream that was a quarter of the
switchboard's CPU. This lane POSTs the call itself, on the same pooled keep-alive `httpx` client the
SDK's transport uses (so the same connections, the same bearer per principal from exchange.py's
`BearerAuth`, each request in one write: coalesced.py), with the session id and the protocol version
the SDK negotiated (its stamp writes the headers it would have sent), and reads the answer as JSON.

The semantics are the SDK path's (streamable_http.py in the SDK, and transport.py's conversions):

- a JSON answer, or an SSE stream whose `notifications/progress` for this call push the deadline out
  and are forwarded, and whose final answer ends the call; anything else the server streams for the
  call (log lines, its own sampling, elicitation or roots requests) is handed to the SDK's read side
  in the sending task's context (`inject`), where the SDK's dispatcher treats it as if it had read
  it itself: tied to its call (owners.py), and a request answered through the SDK's own POST;
- 202, a redirect, a 4xx/5xx, an unexpected content type, a stream that ends without an answer: the
  same JSON-RPC error the SDK's transport makes of them (http_answers.py), the server's own when its
  body holds one (a session the server ended or expired: its 404, passed on as the SDK passes it);
- a connection refused (or no pooled connection in time) is `NotSent`; a failure after the request
  may have left (a write, a read, the peer closing) is `ConnectionLost`: sent, as SPEC §14 says;
- the timeout, pushed out by progress; an abandoned call's POST closed, and on the handshake era
  `notifications/cancelled` POSTed, as the SDK does.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx2
from mcp.shared._httpx_utils import stream_within_origin
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, PARSE_ERROR, jsonrpc_message_adapter
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri.switchboard.base import (
    ConnectionLost,
    Done,
    DownstreamError,
    Notify,
    NotSent,
    PeerError,
    jsonlines,
    spans,
)
from colibri.switchboard.downstream.http_answers import answer_of, parsed
from colibri.switchboard.downstream.lane_calls import LaneCalls, Stamp
from colibri.switchboard.downstream.lanes import outcome_of

log = logging.getLogger("colibri.switchboard")

# httpx errors raised before any byte of the request left: the server cannot have acted on it.
UNSENT_HTTP_ERRORS = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
ACCEPT = "application/json, text/event-stream"

# Hands a message to the SDK's read side, to be dispatched in the given context (watched.py).
Inject = Callable[[SessionMessage, contextvars.Context], None]


class HttpLane(LaneCalls):
    """The lean lane of one Streamable HTTP connection (same seam as lanes.py's `DownstreamLane`).

    `send` starts the POST and returns at once; its outcome is handed to its `done` exactly once.
    `call` is the same, awaited.
    """

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url
        self._client: httpx2.AsyncClient | None = None
        self._posts: dict[str, asyncio.Task[None]] = {}
        self._telling: set[asyncio.Task[None]] = set()
        self.inject: Inject | None = None
        self.on_refused: Callable[[str], None] | None = None
        # The SDK's session as it last sent it (`seen`): the lane speaks in that session.
        self.session_id: str | None = None
        self.version: str | None = None

    def attach(self, client: httpx2.AsyncClient) -> None:
        self._client = client

    def seen(self, message: httpx2.Request | httpx2.Response) -> None:
        """An SDK request about to go, or the answer to one (the session is first named in the answer
        to `initialize`): its session and protocol version are the lane's too."""
        session = message.headers.get(SESSION_HEADER)
        if session is not None:
            self.session_id = session
        version = message.headers.get(VERSION_HEADER)
        if version is not None and isinstance(message, httpx2.Request):
            self.version = version

    def close(self, reason: str) -> None:
        """The connection ended: every call in flight has lost its answer."""
        super().close(reason)
        for post in list(self._posts.values()):
            post.cancel()  # their answers can no longer come: their streams closed with the client

    def send(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        on_progress: Notify | None,
        stamp: Stamp | None,
        *,
        done: Done,
    ) -> str:
        """POST tools/call; `done` gets its outcome. Returns the call's key (for `abandon`)."""
        client = self._client
        if self._closed is not None or client is None:
            raise NotSent("the connection is closed")
        key, request = self._request(name, arguments)
        options: dict[str, Any] = {}
        if stamp is not None:
            stamp(request, options)  # the SDK's own headers (protocol version; name on the 2026 era)
        headers = {"accept": ACCEPT, "content-type": "application/json", **options.get("headers", {})}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        span = spans.sending(name, request["params"]["_meta"])
        self._pending_for(key, timeout, on_progress, done, span)
        # A task in the sender's context: the exchanged bearer (exchange.py) and the call's owner
        # (owners.py's CALL) are read there, as the SDK's transport reads them in its POST's task.
        post = asyncio.get_running_loop().create_task(
            self._post(client, key, jsonlines.dumps(request), headers)
        )
        self._posts[key] = post
        post.add_done_callback(partial(self._posted, key))
        return key

    def abandon(self, key: str, reason: str) -> None:
        """Nobody waits for this call any more: its POST closed, and the server told (handshake era)."""
        if self._forget(key) is None:
            return
        post = self._posts.pop(key, None)
        if post is not None:
            post.cancel()
        client = self._client
        if client is None or self._closed is not None or self.version in MODERN_PROTOCOL_VERSIONS:
            return  # the 2026 era has no client notifications over HTTP: the closed stream says it
        params = {"requestId": key, "reason": reason}
        notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
        told = asyncio.get_running_loop().create_task(self._notify(client, jsonlines.dumps(notice)))
        self._telling.add(told)  # kept until done (the loop keeps only weak references)
        told.add_done_callback(self._telling.discard)

    async def _notify(self, client: httpx2.AsyncClient, body: bytes) -> None:
        try:
            await client.post(self._url, content=body, headers=self._headers())
        except httpx2.HTTPError as exc:  # a courtesy: the call is given up either way
            log.debug("could not send a cancellation: %s", exc)

    def _headers(self) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.version is not None:
            headers[VERSION_HEADER] = self.version
        return headers

    async def _post(self, client: httpx2.AsyncClient, key: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            # The SDK's own way to POST: a same-origin 307/308 (a trailing slash, say) followed, no other.
            async with stream_within_origin(
                client, "POST", self._url, content=body, headers=headers
            ) as response:
                outcome = await answer_of(response, self.session_id is not None, partial(self._streamed, key))
        except UNSENT_HTTP_ERRORS:
            self._finish(key, NotSent("the connection was refused before the request could be sent"))
            # The SDK's transport ends the whole connection on a refused request, and the supervisor
            # reconnects (or finds the server down): the lane does too, so both paths agree on health.
            if self.on_refused is not None:
                self.on_refused("the connection was refused")
            return
        except httpx2.HTTPError as exc:
            log.debug("%s: the POST failed: %s", key, exc)
            outcome = ConnectionLost("the connection closed before the answer came")
        self._finish(key, outcome)

    def _posted(self, key: str, post: asyncio.Task[None]) -> None:
        if self._posts.get(key) is post:
            del self._posts[key]
        if not post.cancelled() and post.exception() is not None:
            # A bug of ours, not the server's: the call still gets an answer, and the error is logged.
            log.error("the HTTP lane failed on %s", key, exc_info=post.exception())
            self._finish(
                key, ConnectionLost(f"the switchboard failed reading the answer: {post.exception()}")
            )

    async def _streamed(self, key: str, response: httpx2.Response) -> dict[str, Any] | DownstreamError:
        """An SSE answer: progress for this call taken here, the answer returned, the rest to the SDK."""
        context = contextvars.copy_context()
        try:
            async for event in httpx2.EventSource(response):
                if event.event != "message" or not event.data:
                    continue  # a priming event (resumability): nothing to read
                message = parsed(event.data.encode())
                if not isinstance(message, dict):
                    return PeerError(PARSE_ERROR, "Failed to parse SSE message")
                if "id" in message and "method" not in message:
                    return outcome_of(message)  # the answer (its id is ours: one request per POST)
                if message.get("method") == "notifications/progress" and self._progress_of(key, message):
                    continue
                self._handed(message, context)
        except httpx2.SSEError as exc:
            return PeerError(INTERNAL_ERROR, f"SSE stream failed: {exc}")
        return PeerError(INTERNAL_ERROR, "SSE stream ended without a response")

    def _progress_of(self, key: str, message: dict[str, Any]) -> bool:
        """Whether `message` is progress of the call `key` (taken here: the deadline, the forward)."""
        params = message.get("params")
        if not isinstance(params, dict) or params.get("progressToken") != key:
            return False
        self._progressed(key, params)
        return True

    def _handed(self, message: dict[str, Any], context: contextvars.Context) -> None:
        """Anything else the server streamed for this call goes to the SDK, as if it had read it."""
        inject = self.inject
        try:
            parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
        except ValueError as exc:
            log.debug("dropped a malformed message on a lean call's stream: %s", exc)
            return
        if inject is None:
            log.debug("dropped %s: no SDK read side to hand it to", message.get("method"))
            return
        inject(SessionMessage(parsed), context)
