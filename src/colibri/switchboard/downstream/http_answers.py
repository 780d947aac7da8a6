"""What the SDK's Streamable HTTP transport makes of a POST's response, for the lean lane (http_lane.py).

Each status and content type the SDK's transport (mcp/client/streamable_http.py) turns into an
answer or a JSON-RPC error is turned into the same here, so a call comes to the same outcome on
either path: 202 and a redirect are INVALID_REQUEST; a 4xx/5xx passes on the JSON-RPC error in its
body when it has one, else 404 is "Session terminated" (INVALID_REQUEST) in a session and "Not
Found" (METHOD_NOT_FOUND) before one, and any other "Server returned an error response"
(INTERNAL_ERROR); a JSON body is the answer; an event stream is read by the lane (`streamed`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

from colibri.switchboard.base import DownstreamError, PeerError, jsonlines
from colibri.switchboard.downstream.lanes import outcome_of

Outcome = dict[str, Any] | DownstreamError


async def answer_of(
    response: httpx2.Response, in_session: bool, streamed: Callable[[httpx2.Response], Awaitable[Outcome]]
) -> Outcome:
    """The raw result of `response`, or the error the SDK's transport would have made of it."""
    status = response.status_code
    kind = response.headers.get("content-type", "").lower()
    if status == 202:
        return PeerError(INVALID_REQUEST, "server answered a request with 202 Accepted")
    if 300 <= status < 400 and "location" in response.headers:
        # One the SDK would not follow either (another origin, or past the client's budget).
        where = response.headers["location"]
        return PeerError(
            INVALID_REQUEST, f"the server redirected the request ({status}) to {where}; not followed"
        )
    if status >= 400:
        if kind.startswith("application/json"):
            answer = parsed(await response.aread())
            if isinstance(answer, dict) and "error" in answer and "result" not in answer:
                outcome = outcome_of(answer)
                if isinstance(outcome, PeerError):
                    return outcome
        if status == 404:
            if in_session:
                return PeerError(INVALID_REQUEST, "Session terminated")
            return PeerError(METHOD_NOT_FOUND, "Not Found")
        return PeerError(INTERNAL_ERROR, "Server returned an error response")
    if kind.startswith("application/json"):
        answer = parsed(await response.aread())
        if not isinstance(answer, dict):
            return PeerError(PARSE_ERROR, "Failed to parse JSON response")
        return outcome_of(answer)
    if kind.startswith("text/event-stream"):
        return await streamed(response)
    return PeerError(INVALID_REQUEST, f"Unexpected content type: {kind}")


def parsed(body: bytes) -> Any:
    """The JSON value of `body`, or None when it is not JSON."""
    try:
        return jsonlines.loads(body)
    except (ValueError, RecursionError):
        return None
